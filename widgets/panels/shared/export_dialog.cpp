#include "export_dialog.h"

#include <QDir>
#include <QFileInfo>
#include <QObject>
#include <QSettings>

#include "ask.h"
#include "figure_export.h"

namespace lengen::ui {

namespace {
QString& fallbackFolder()
{
    static QString folder;  // GUI thread only
    return folder;
}
const QString kLastExportKey = QStringLiteral("export/lastFolder");
}  // namespace

void setExportFallbackFolder(const QString& folder) { fallbackFolder() = folder; }

QString exportFolder()
{
    // Issue 70, defect 18: the dialogs started in the process's current folder.
    const QString last = QSettings().value(kLastExportKey).toString();
    if (!last.isEmpty() && QFileInfo(last).isDir())
        return last;
    if (!fallbackFolder().isEmpty() && QFileInfo(fallbackFolder()).isDir())
        return QFileInfo(fallbackFolder()).absoluteFilePath();
    return QDir::currentPath();
}

void rememberExportFolder(const QString& folder)
{
    QSettings().setValue(kLastExportKey, QFileInfo(folder).absoluteFilePath());
}

void askExportTarget(QWidget* parent, const QString& title, const QString& suggestedFile,
                     std::function<void(const ExportChoice&)> then)
{
    const QString suggested = QFileInfo(suggestedFile).isAbsolute()
                                  ? suggestedFile
                                  : QDir(exportFolder()).filePath(suggestedFile);
    const QString filter =
        QObject::tr("PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf);;"
                    "CSV data (*.csv);;LaTeX pgfplots, data files beside it (*.tex)");
    ask::saveFile(
        parent, title, suggested, filter, [parent, then = std::move(then)](const QString& path) {
            QSettings().setValue(kLastExportKey, QFileInfo(path).absolutePath());
            if (plots::formatFromPath(path) != plots::Format::Png)
                return then(ExportChoice{path, 150});
            ask::integer(parent, QObject::tr("PNG resolution"), QObject::tr("Dots per inch:"), 150,
                         30, 1200, 10, [path, then](int dpi) {
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
