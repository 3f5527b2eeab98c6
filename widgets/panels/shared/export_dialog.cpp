#include "export_dialog.h"

#include <QObject>

#include "ask.h"
#include "figure_export.h"

namespace lengen::ui {

void askExportTarget(QWidget* parent, const QString& title, const QString& suggestedFile,
                     std::function<void(const ExportChoice&)> then)
{
    const QString filter =
        QObject::tr("PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf);;"
                    "CSV data (*.csv);;LaTeX pgfplots, data files beside it (*.tex)");
    ask::saveFile(parent, title, suggestedFile, filter,
                  [parent, then = std::move(then)](const QString& path) {
                      if (plots::formatFromPath(path) != plots::Format::Png)
                          return then(ExportChoice{path, 150});
                      ask::integer(parent, QObject::tr("PNG resolution"),
                                   QObject::tr("Dots per inch:"), 150, 30, 1200, 10,
                                   [path, then](int dpi) {
                                       then(ExportChoice{path, dpi});
                                   });
                  });
}

void reportExport(QWidget* parent, bool ok, const QString& error)
{
    if (!ok)
        ask::tell(parent, QObject::tr("Export failed"), error, true);
}

}  // namespace lengen::ui
