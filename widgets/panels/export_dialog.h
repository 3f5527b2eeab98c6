#pragma once
// The studio's one way to ask where to export a plot: a save dialog offering PNG, SVG, PDF and
// CSV, then (for PNG) the resolution. Every view's Export button goes through it, so they
// offer the same formats and remember nothing different. GUI thread only.

#include <QString>

#include <optional>

class QWidget;

namespace lengen::ui {

struct ExportChoice {
    QString path;   ///< the format follows the extension (plots::formatFromPath)
    int dpi = 150;  ///< PNG only
};

/// nullopt when the user cancels either dialog.
std::optional<ExportChoice> askExportTarget(QWidget* parent, const QString& title,
                                            const QString& suggestedFile);

/// Shows `error` (which names the path) in a warning box when `ok` is false.
void reportExport(QWidget* parent, bool ok, const QString& error);

}  // namespace lengen::ui
