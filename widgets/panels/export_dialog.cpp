#include "export_dialog.h"

#include <QFileDialog>
#include <QInputDialog>
#include <QMessageBox>

#include "figure_export.h"

namespace lengen::ui {

std::optional<ExportChoice> askExportTarget(QWidget* parent, const QString& title,
                                            const QString& suggestedFile)
{
    ExportChoice c;
    c.path = QFileDialog::getSaveFileName(
        parent, title, suggestedFile,
        QObject::tr("PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf);;CSV data (*.csv);;"
                    "LaTeX pgfplots, data files beside it (*.tex)"));
    if (c.path.isEmpty())
        return std::nullopt;
    if (plots::formatFromPath(c.path) == plots::Format::Png) {
        bool ok = false;
        c.dpi = QInputDialog::getInt(parent, QObject::tr("PNG resolution"), QObject::tr("Dots per inch:"),
                                     150, 30, 1200, 10, &ok);
        if (!ok)
            return std::nullopt;
    }
    return c;
}

void reportExport(QWidget* parent, bool ok, const QString& error)
{
    if (!ok)
        QMessageBox::warning(parent, QObject::tr("Export failed"), error);
}

}  // namespace lengen::ui
