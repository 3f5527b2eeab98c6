#pragma once
// What every export format shares (internal to lengen_plots): numbers as the shortest text
// that reads back to the same value, CSV fields, and files that appear atomically (written as
// <path>.partial, renamed into place; a failure leaves nothing and names the path).

#include <QString>

#include <charconv>
#include <functional>
#include <string>

#include "figure_export.h"

class QPdfWriter;
class QSvgGenerator;

namespace lengen::plots::files {

/// Every figure is laid out at 96 logical dpi (Qt's and the browsers' CSS pixel); rasters scale
/// from it, so text keeps its size in points relative to the page at every dpi.
inline constexpr double kLayoutDpi = 96.0;

/// A PDF of one page exactly widthIn x heightIn inches, at the layout's dpi, with its title and
/// creator; "" or why not. (QCustomPlot's savePdf makes the page w x h *points*.)
QString setUpPdf(QPdfWriter& pdf, double widthIn, double heightIn, const QString& title);
/// An SVG of w x h layout pixels (so its size in mm is the figure's inches), titled.
void setUpSvg(QSvgGenerator& svg, const QString& file, int w, int h, const QString& title);

/// "0.1", not "0.10000000000000001"; non-finite values as nan / inf / -inf (numpy, pandas and
/// pgfplots read them).
template <typename T>
QString number(T v)
{
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    return QString::fromLatin1(buf, static_cast<int>(r.ptr - buf));
}

/// A CSV field, quoted RFC 4180-style when it holds a comma, quote or line break.
QString csvField(const std::string& s);
/// "cannot write PATH: WHY".
QString failure(const QString& path, const QString& why);
/// Runs `save` on `<path>.partial` (it returns "" or why it failed) and renames it to `path`.
ExportResult atomically(const QString& path, const std::function<QString(const QString&)>& save);
/// Writes `text` as UTF-8; "" or the reason it failed.
QString writeText(const QString& file, const QString& text);

}  // namespace lengen::plots::files
