// Parallel coordinates: the axes' scales, the brushes, and the one paint routine (the studio's
// widget paints through it into its cached image; parallel_export.cpp into files).

#include "parallel_coords.h"

#include <QRegularExpression>

#include <QFontMetricsF>
#include <QLinearGradient>
#include <QPainter>
#include <QVector>

#include <algorithm>
#include <array>
#include <cmath>
#include <set>
#include <thread>

#include "figure_builder.h"
#include "line_raster.h"
#include "plot_style.h"

namespace lengen::plots {

namespace {

// Margins of the plot in logical pixels (96 a inch): axis names and the title above, the
// bottom tick below, the colour scale to the right.
constexpr double kLeft = 70, kRight = 110, kTop = 52, kBottom = 26;
constexpr int kBins = 32;  // colour steps: one drawLines call each

double scaled(const ParallelAxis& a, double v) { return a.log ? std::log10(v) : v; }

// Tick values of a numeric axis: 1-2-5 steps (linear) or powers of ten (log) inside its range;
// the two ends where that gives fewer than two.
std::vector<double> ticksOf(const ParallelAxis& a)
{
    std::vector<double> t;
    if (a.log) {
        for (double e = std::ceil(std::log10(a.min)); e <= std::floor(std::log10(a.max)); ++e)
            t.push_back(std::pow(10.0, e));
    } else {
        const double span = a.max - a.min;
        const double base = std::pow(10.0, std::floor(std::log10(span / 4)));
        double step = base;
        for (double m : {1.0, 2.0, 5.0, 10.0})
            if (span / (base * m) <= 5) {
                step = base * m;
                break;
            }
        if (a.integers)  // seed 1.2 is no seed
            step = std::max(1.0, std::round(step));
        for (double v = std::ceil(a.min / step) * step; v <= a.max + step * 1e-9; v += step)
            t.push_back(std::fabs(v) < step * 1e-9 ? 0.0 : v);
    }
    if (t.size() < 2)
        t = {a.min, a.max};
    return t;
}

// Where a value sits on an axis (axisFraction), with the axis's scale worked out once: the rows'
// values are placed every frame.
struct Scale {
    double lo = 0, span = 1, cats = 0;
    bool log = false, categorical = false;
    explicit Scale(const ParallelAxis& a)
        : lo(scaled(a, a.min)), span(scaled(a, a.max) - scaled(a, a.min)),
          cats(double(a.categories.size())), log(a.log), categorical(a.categorical)
    {}
    double operator()(double v) const
    {
        if (!std::isfinite(v) || (log && v <= 0))
            return NAN;
        if (categorical)
            return cats < 2 ? 0.5 : v / (cats - 1);
        return span > 0 ? ((log ? std::log10(v) : v) - lo) / span : 0.5;
    }
};

// One pair of neighbouring axes' segments, by pen: kBins colours, one colour, grey.
using ParallelPairLines = std::array<QVector<QLineF>, kBins + 2>;
// The pens in drawing order, each with its index into ParallelPairLines.
using ParallelPens = std::vector<std::pair<size_t, QColor>>;

// A row's pen: a colour bin (by its value of the colour column), one colour (no colour column
// or value), or grey outside the brushes.
int parallelRowBin(const ParallelSpec& s, const std::vector<Scale>& scales, int r, bool inside,
                   bool categoricalColor)
{
    int bin = kBins + 1;
    if (inside) {
        bin = kBins;
        if (s.colorAxis >= 0 && categoricalColor) {  // the category's index, one pen each
            const double c = s.value(r, s.colorAxis);
            if (std::isfinite(c))
                bin = std::clamp(int(std::lround(c)), 0, kBins - 1);
        } else if (s.colorAxis >= 0) {
            const double c = scales[size_t(s.colorAxis)](s.value(r, s.colorAxis));
            if (std::isfinite(c))
                bin = std::clamp(int(c * kBins), 0, kBins - 1);
        }
    }
    return bin;
}

// The rows' segments by the pair of axes they join, then by pen: kBins colours, one colour
// (no colour column or value), outside the brushes (grey). A NaN breaks the line.
std::vector<ParallelPairLines> parallelSegments(const ParallelLayout& l, const ParallelSpec& s,
                                                const std::vector<char>& inside,
                                                bool categoricalColor)
{
    const int n = s.rows(), k = int(s.axes.size());
    std::vector<Scale> scales;
    for (const auto& a : s.axes)
        scales.emplace_back(a);
    std::vector<ParallelPairLines> lines(size_t(k - 1));
    std::vector<double> f(static_cast<size_t>(k));
    for (int r = 0; r < n; ++r) {
        const int bin = parallelRowBin(s, scales, r, inside[size_t(r)], categoricalColor);
        for (int a = 0; a < k; ++a)
            f[size_t(a)] = scales[size_t(a)](s.value(r, a));
        for (size_t a = 0; a + 1 < size_t(k); ++a)
            if (std::isfinite(f[a]) && std::isfinite(f[a + 1]))
                lines[a][size_t(bin)].append(
                    QLineF(l.x[a], l.yAt(f[a]), l.x[a + 1], l.yAt(f[a + 1])));
    }
    return lines;
}

// Dense figures draw thin translucent lines without antialiasing, so that 10,000 rows stay
// a frame's work and their density still shows. Grey under the colours.
// Category i's colour on a colouring axis: its own where given, else the palette's.
QColor categoryPen(const ParallelAxis& axis, size_t i)
{
    return i < axis.categoryColors.size() ? QColor(QString::fromStdString(axis.categoryColors[i]))
                                          : paletteColor(int(i));
}

// `colorAxis`: the categorical axis that colours the rows, null for a numeric scale.
ParallelPens parallelPens(int n, const ParallelAxis* colorAxis)
{
    const int alpha = std::clamp(int(60000.0 / std::max(n, 1)), 28, 255);
    ParallelPens pens = {{kBins + 1, QColor(0xC4, 0xC4, 0xCC)}, {kBins, QColor(0x4C, 0x72, 0xB0)}};
    for (int b = 0; b < kBins; ++b)
        pens.push_back({size_t(b), colorAxis ? categoryPen(*colorAxis, size_t(b))
                                             : QColor(scaleColor((b + 0.5) / kBins))});
    for (auto& pen : pens)
        pen.second.setAlpha(alpha);
    return pens;
}

// Into an image (the studio's, a PNG), the lines are blended straight into its pixels
// (line_raster): QPainter's own cost 4 s at 10,000 rows. Each pair of axes covers its own
// columns of pixels, so the even pairs are blended side by side on two threads, then the
// odd ones. SVG and PDF keep vectors: false, nothing drawn.
bool blendParallelRows(QPainter& p, const ParallelLayout& l,
                       const std::vector<ParallelPairLines>& lines, const ParallelPens& pens, int n)
{
    auto* image = dynamic_cast<QImage*>(p.device());
    const auto target = n > 200 && image ? pixelTarget(*image, p.deviceTransform()) : std::nullopt;
    if (!target)
        return false;
    auto blendPairs = [&](size_t first, size_t step) {
        for (size_t a = first; a < lines.size(); a += step)
            for (const auto& [bin, color] : pens)
                blendLines(*target, lines[a][bin], color);
    };
    // Pairs two apart share no column while the axes are 2 pixels apart or more (a plot
    // squeezed narrower is drawn on one thread).
    if ((l.x[1] - l.x[0]) * target->transform.m11() < 2) {
        blendPairs(0, 1);
        return true;
    }
    for (size_t parity : {0, 1}) {
        std::thread second(blendPairs, parity + 2, 4);  // pairs parity+2, parity+6, ...
        blendPairs(parity, 4);                          // pairs parity, parity+4, ...
        second.join();
    }
    return true;
}

// The segments as the painter's lines (vectors), a pen at a time.
void paintParallelRows(QPainter& p, const std::vector<ParallelPairLines>& lines,
                       const ParallelPens& pens, int n)
{
    p.setRenderHint(QPainter::Antialiasing, n <= 2000);
    for (const auto& [bin, color] : pens) {
        QPen pen(color, n <= 200 ? 1.6 : 0);  // 0: a cosmetic hairline
        pen.setCosmetic(true);
        p.setPen(pen);
        for (const auto& pair : lines)
            if (!pair[bin].isEmpty())
                p.drawLines(pair[bin]);
    }
    p.setRenderHint(QPainter::Antialiasing, true);
}

// The rows: their segments worked out, then blended into an image or painted.
void drawRows(QPainter& p, const ParallelLayout& l, const ParallelSpec& s,
              const std::vector<char>& inside)
{
    const int n = s.rows(), k = int(s.axes.size());
    if (k < 2)
        return;
    const bool categoricalColor =
        s.colorAxis >= 0 && s.colorAxis < k && s.axes[size_t(s.colorAxis)].categorical;
    const auto lines = parallelSegments(l, s, inside, categoricalColor);
    const ParallelPens pens =
        parallelPens(n, categoricalColor ? &s.axes[size_t(s.colorAxis)] : nullptr);
    if (!blendParallelRows(p, l, lines, pens, n))
        paintParallelRows(p, lines, pens, n);
}

// The names over the axes: a result that does not fit goes on two lines at its '@'
// ("ood_length" over "@longest"); the names' font shrinks (down to 8 pt) until every line
// fits the room between two axes, and only then is a name elided in the middle.
std::vector<QStringList> axisNames(const ParallelSpec& s, double room, QFont& font)
{
    std::vector<QStringList> names;
    for (int size = style::kLabelPt;; --size) {
        font = style::font(size, true);
        const QFontMetricsF fm(font);
        names.clear();
        bool fits = true;
        for (size_t a = 0; a < s.axes.size(); ++a) {
            const QString full = QString::fromStdString(axisLabel(s, int(a)));
            const auto at = full.lastIndexOf('@');
            names.push_back(fm.horizontalAdvance(full) > room && at > 0
                                ? QStringList{full.left(at), full.mid(at)}
                                : QStringList{full});
            for (const auto& line : names.back())
                fits = fits && fm.horizontalAdvance(line) <= room;
        }
        if (fits || size <= 8)
            return names;
    }
}

void drawAxes(QPainter& p, const ParallelLayout& l, const ParallelSpec& s)
{
    const QFont tick = style::font(style::kTickPt - 1);
    QFont name;
    const double room = l.plot.width() / double(std::max<size_t>(s.axes.size(), 2) - 1) - 8;
    const auto names = axisNames(s, room, name);
    const QFontMetricsF tm(tick), nm(name);
    for (size_t a = 0; a < s.axes.size(); ++a) {
        const auto& axis = s.axes[a];
        const double x = l.x[a];
        p.setPen(QPen(style::textColor(), 1.2));
        p.drawLine(QPointF(x, l.plot.top()), QPointF(x, l.plot.bottom()));
        p.setFont(name);
        const auto& lines = names[a];
        for (int i = 0; i < lines.size(); ++i) {
            const QString label = nm.elidedText(lines[i], Qt::ElideMiddle, room);
            const double y = l.plot.top() - 10 - (lines.size() - 1 - i) * nm.lineSpacing();
            p.drawText(QPointF(x - nm.horizontalAdvance(label) / 2, y), label);
        }
        p.setFont(tick);
        std::vector<std::pair<double, QString>> marks;
        if (axis.categorical) {
            for (size_t c = 0; c < axis.categories.size(); ++c)
                marks.push_back({double(c), QString::fromStdString(axis.categories[c])});
        } else {
            const auto values = ticksOf(axis);
            const auto texts = parallelTickTexts(values);
            for (size_t t = 0; t < values.size(); ++t)
                marks.push_back({values[t], texts[int(t)]});
        }
        for (const auto& [v, text] : marks) {
            const double y = l.yAt(axisFraction(axis, v));
            p.drawLine(QPointF(x - 4, y), QPointF(x, y));
            // Text to the axis's left, with a light halo so the rows under it do not hide it.
            const QRectF box(x - 6 - tm.horizontalAdvance(text), y - tm.height() / 2,
                             tm.horizontalAdvance(text), tm.height());
            p.fillRect(box.adjusted(-1, 0, 1, 0), QColor(255, 255, 255, 170));
            p.drawText(box, Qt::AlignRight | Qt::AlignVCenter, text);
        }
    }
}

void drawBrushes(QPainter& p, const ParallelLayout& l, const ParallelSpec& s)
{
    for (const auto& b : s.brushes) {
        if (b.axis < 0 || b.axis >= int(s.axes.size()))
            continue;
        const auto& axis = s.axes[size_t(b.axis)];
        // A categorical brush is drawn over its categories' ticks, not as a 2-px line.
        const double pad = axis.categorical ? 0.35 : 0;
        const double y0 = l.yAt(std::clamp(axisFraction(axis, b.high + pad), 0.0, 1.0));
        const double y1 = l.yAt(std::clamp(axisFraction(axis, b.low - pad), 0.0, 1.0));
        const QRectF r(l.x[size_t(b.axis)] - 7, y0, 14, std::max(y1 - y0, 2.0));
        p.setPen(QPen(QColor(0x26, 0x26, 0x26), 1));
        p.setBrush(QColor(0xDD, 0x84, 0x52, 110));
        p.drawRect(r);
        p.setBrush(Qt::NoBrush);
    }
}

// A categorical colour column: a swatch and the name of each category, top down.
void drawCategoryKey(QPainter& p, const QRectF& area, const ParallelLayout& l,
                     const ParallelAxis& axis)
{
    p.setFont(style::font(style::kTickPt - 1));
    const QFontMetricsF fm(p.font());
    const double x = area.right() - kRight + 30, line = fm.height() + 2;
    for (size_t i = 0; i < axis.categories.size() && i < size_t(kBins); ++i) {
        const double y = l.plot.top() + double(i) * line;
        if (y + line > l.plot.bottom())
            break;
        p.fillRect(QRectF(x, y + 2, 10, fm.height() - 4), categoryPen(axis, i));
        p.setPen(style::textColor());
        p.drawText(
            QRectF(x + 14, y, kRight - 46, fm.height()), Qt::AlignLeft | Qt::AlignVCenter,
            fm.elidedText(QString::fromStdString(axis.categories[i]), Qt::ElideRight, kRight - 46));
    }
}

void drawColorScale(QPainter& p, const QRectF& area, const ParallelLayout& l, const ParallelSpec& s)
{
    if (s.colorAxis < 0 || s.colorAxis >= int(s.axes.size()))
        return;
    const auto& axis = s.axes[size_t(s.colorAxis)];
    if (axis.categorical)
        return drawCategoryKey(p, area, l, axis);
    const QRectF bar(area.right() - kRight + 36, l.plot.top(), 14, l.plot.height());
    QLinearGradient g(bar.bottomLeft(), bar.topLeft());
    for (int i = 0; i <= 8; ++i)
        g.setColorAt(i / 8.0, QColor(scaleColor(i / 8.0)));
    p.fillRect(bar, g);
    p.setFont(style::font(style::kTickPt - 1));
    p.setPen(style::textColor());
    const auto ends = parallelTickTexts({axis.max, axis.min});
    p.drawText(QPointF(bar.right() + 4, bar.top() + 8), axis.categorical ? QString() : ends[0]);
    p.drawText(QPointF(bar.right() + 4, bar.bottom()), axis.categorical ? QString() : ends[1]);
    p.save();
    p.translate(bar.left() - 6, bar.center().y());
    p.rotate(-90);
    const QString name = QString::fromStdString(axis.name);
    p.drawText(QPointF(-QFontMetricsF(p.font()).horizontalAdvance(name) / 2, 0), name);
    p.restore();
}

}  // namespace

QString parallelTickText(double v)
{
    const double a = std::fabs(v);
    if (!std::isfinite(v))
        return {};
    if (v == std::floor(v) && a < 1e7)
        return QString::number(static_cast<qint64>(v));  // 1500 steps, not 1.5e+03
    if (a >= 1e-3 && a < 1e7) {  // three significant digits, and every integer digit
        const int digits = std::max(3, int(std::floor(std::log10(a))) + 1);
        return QString::number(v, 'g', digits);
    }
    return QString::number(v, 'g', 3);
}

QStringList parallelTickTexts(const std::vector<double>& values)
{
    const bool exponent = std::any_of(values.begin(), values.end(), [](double v) {
        const double a = std::fabs(v);
        return std::isfinite(v) && a != 0 && (a >= 1e7 || a < 1e-3);
    });
    QStringList out;
    for (const double v : values)
        out << (!std::isfinite(v) ? QString()
                : exponent && v != 0
                    ? QString::number(v, 'e', 2).replace(QRegularExpression("\\.?0+e"), "e")
                    : parallelTickText(v));
    return out;
}

void fitAxes(ParallelSpec& spec)
{
    const int n = spec.rows();
    for (size_t a = 0; a < spec.axes.size(); ++a) {
        auto& axis = spec.axes[a];
        if (axis.categorical) {
            axis.min = 0;
            axis.max = std::max<double>(double(axis.categories.size()) - 1, 0);
            axis.log = false;
            continue;
        }
        double lo = INFINITY, hi = -INFINITY;
        for (int r = 0; r < n; ++r) {
            const double v = spec.value(r, int(a));
            if (std::isfinite(v)) {
                lo = std::min(lo, v);
                hi = std::max(hi, v);
            }
        }
        if (!std::isfinite(lo)) {  // no value at all: any range draws
            lo = 0;
            hi = 1;
        }
        axis.log = axis.log && lo > 0;
        if (lo == hi) {
            const double pad = axis.log ? 0 : (lo == 0 ? 1 : std::fabs(lo) * 0.1);
            lo = axis.log ? lo / 2 : lo - pad;
            hi = axis.log ? hi * 2 : hi + pad;
        }
        axis.min = lo;
        axis.max = hi;
    }
}

double axisFraction(const ParallelAxis& axis, double v) { return Scale(axis)(v); }

double axisValue(const ParallelAxis& axis, double f)
{
    if (axis.categorical)  // one category sits at 0.5
        return axis.categories.size() < 2 ? f - 0.5 : f * double(axis.categories.size() - 1);
    if (f <= 0)  // the ends exactly: 10^log10(max) can fall short of max by an ulp
        return axis.min;
    if (f >= 1)
        return axis.max;
    const double v = scaled(axis, axis.min) + f * (scaled(axis, axis.max) - scaled(axis, axis.min));
    return axis.log ? std::pow(10.0, v) : v;
}

ParallelBrush snappedBrush(const ParallelSpec& spec, ParallelBrush b)
{
    if (b.axis < 0 || b.axis >= int(spec.axes.size()) || !spec.axes[size_t(b.axis)].categorical)
        return b;
    const double last = std::max(0.0, double(spec.axes[size_t(b.axis)].categories.size()) - 1);
    b.low = std::clamp(std::round(b.low), 0.0, last);
    b.high = std::clamp(std::round(b.high), b.low, last);
    return b;
}

std::vector<char> rowsInside(const ParallelSpec& spec)
{
    const int n = spec.rows();
    std::vector<char> in(size_t(n), 1);
    for (const auto& b : spec.brushes) {
        if (b.axis < 0 || b.axis >= int(spec.axes.size()))
            continue;
        for (int r = 0; r < n; ++r) {
            const double v = spec.value(r, b.axis);
            in[size_t(r)] = in[size_t(r)] && std::isfinite(v) && v >= b.low && v <= b.high;
        }
    }
    return in;
}

std::string shortKeyName(const std::string& name)
{
    // A part that says nothing alone keeps its parent ("points.end", not "end": the
    // curriculum's axes read "end / increment / start", found under Xvfb).
    static const std::set<std::string> generic = {"start", "end",  "increment", "interval", "value",
                                                  "type",  "name", "min",       "max"};
    const auto dot = name.rfind('.');
    if (dot == std::string::npos)
        return name;
    const std::string tail = name.substr(dot + 1);
    if (!generic.count(tail) || dot == 0)
        return tail;
    const auto parent = name.rfind('.', dot - 1);
    return name.substr(parent == std::string::npos ? 0 : parent + 1);
}

std::string axisLabel(const ParallelSpec& spec, int axis)
{
    const std::string& name = spec.axes.at(size_t(axis)).name;
    for (size_t a = 0; a < spec.axes.size(); ++a)
        if (int(a) != axis && shortKeyName(spec.axes[a].name) == shortKeyName(name))
            return name;
    return shortKeyName(name);
}

ParallelLayout parallelLayout(const ParallelSpec& spec, const QRectF& area)
{
    ParallelLayout l;
    const double top = kTop + (spec.title.empty() ? 0 : 20);
    // The first axis's tick labels sit to its left: room for the widest (an encoding's name).
    double left = kLeft;
    if (!spec.axes.empty() && spec.axes.front().categorical) {
        const QFontMetricsF tm(style::font(style::kTickPt - 1));
        for (const auto& c : spec.axes.front().categories)
            left = std::max(left, tm.horizontalAdvance(QString::fromStdString(c)) + 16);
    }
    l.plot = QRectF(area.left() + left, area.top() + top, area.width() - left - kRight,
                    area.height() - top - kBottom);
    const size_t k = spec.axes.size();
    for (size_t a = 0; a < k; ++a)
        l.x.push_back(k < 2 ? l.plot.center().x()
                            : l.plot.left() + l.plot.width() * double(a) / double(k - 1));
    return l;
}

int categoryLabelAxis(const ParallelLayout& l, const ParallelSpec& s, QPointF pos)
{
    // The boxes drawAxes writes the categories in: left of the axis, centred on the tick.
    const QFontMetricsF tm(style::font(style::kTickPt - 1));
    for (size_t a = 0; a < s.axes.size() && a < l.x.size(); ++a) {
        const auto& axis = s.axes[a];
        for (size_t c = 0; axis.categorical && c < axis.categories.size(); ++c) {
            const double y = l.yAt(axisFraction(axis, double(c)));
            const double w = tm.horizontalAdvance(QString::fromStdString(axis.categories[c]));
            if (QRectF(l.x[a] - 8 - w, y - tm.height() / 2, w + 8, tm.height()).contains(pos))
                return int(a);
        }
    }
    return -1;
}

void paintParallelBrushes(QPainter& p, const QRectF& area, const ParallelSpec& spec)
{
    drawBrushes(p, parallelLayout(spec, area), spec);
}

void paintParallel(QPainter& p, const QRectF& area, const ParallelSpec& spec,
                   const std::vector<char>& inside, bool brushes)
{
    p.fillRect(area, Qt::white);
    const auto l = parallelLayout(spec, area);
    p.fillRect(l.plot.adjusted(-12, -4, 12, 4), style::panelColor());
    if (!spec.title.empty()) {
        p.setFont(style::font(style::kTitlePt, true));
        p.setPen(style::textColor());
        p.drawText(QRectF(area.left(), area.top() + 4, area.width(), 22), Qt::AlignCenter,
                   QString::fromStdString(spec.title));
    }
    if (inside.size() == size_t(spec.rows()))
        drawRows(p, l, spec, inside);
    drawAxes(p, l, spec);
    if (brushes)
        drawBrushes(p, l, spec);
    drawColorScale(p, area, l, spec);
}

QString scaleColor(double f)
{
    // matplotlib's viridis at nine stops, linearly between them.
    static const std::array<std::array<int, 3>, 9> stops = {{{68, 1, 84},
                                                             {71, 44, 122},
                                                             {59, 81, 139},
                                                             {44, 113, 142},
                                                             {33, 144, 141},
                                                             {39, 173, 129},
                                                             {92, 200, 99},
                                                             {170, 220, 50},
                                                             {253, 231, 37}}};
    const double x = std::clamp(std::isfinite(f) ? f : 0.0, 0.0, 1.0) * 8;
    const int i = std::min(int(x), 7);
    const double t = x - i;
    auto mix = [&](int c) {
        return int(std::lround(stops[size_t(i)][size_t(c)] * (1 - t) +
                               stops[size_t(i) + 1][size_t(c)] * t));
    };
    return QColor(mix(0), mix(1), mix(2)).name();
}

}  // namespace lengen::plots
