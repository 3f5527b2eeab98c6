#pragma once
// The studio's one way to ask where to export a plot: a save dialog offering PNG, SVG, PDF,
// CSV and pgfplots, then (for PNG) the resolution. Every view's Export button goes through it,
// so they offer the same formats and remember nothing different. Both dialogs open with
// open() (ask.h): the export runs in `then`, after the user chose. GUI thread only.

#include <QString>

#include <functional>

class QWidget;

namespace lengen::ui {

struct ExportChoice {
    QString path;   ///< the format follows the extension (plots::formatFromPath)
    int dpi = 150;  ///< PNG only
};

/// `then` runs once the user chose a file (and a resolution for PNG); never on cancel.
/// Where an export dialog starts when no export was written yet: the runs folder (the window
/// sets it). Later ones start where the last export went (kept in QSettings).
void setExportFallbackFolder(const QString& folder);
/// The folder the next export dialog starts in: the last export's, else the fallback, else
/// the current folder.
QString exportFolder();
/// Records `folder` as where the last export went (an export into a folder chosen, not a file).
void rememberExportFolder(const QString& folder);

void askExportTarget(QWidget* parent, const QString& title, const QString& suggestedFile,
                     std::function<void(const ExportChoice&)> then);

/// Shows `error` (which names the path) in a warning box when `ok` is false.
void reportExport(QWidget* parent, bool ok, const QString& error);

}  // namespace lengen::ui
