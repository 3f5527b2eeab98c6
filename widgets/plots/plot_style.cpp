#include "plot_style.h"

#include "figure_builder.h"
#include "qcp.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

namespace lengen::plots {

namespace {

// seaborn.color_palette("colorblind"): distinguishable with the common colour deficiencies.
const char* const kPalette[] = {"#0173B2", "#DE8F05", "#029E73", "#D55E00", "#CC78BC",
                                "#CA9161", "#FBAFE4", "#949494", "#ECE133", "#56B4E9"};
constexpr int kPaletteSize = static_cast<int>(sizeof kPalette / sizeof kPalette[0]);
// The colours runs and groups take, in the order they are given (issue 80, defect 23): the
// palette with its light blue last (beside its blue, two groups read as one), then ten more
// apart from all of them and from the baselines' tones (CIELAB ΔE over 28), so twenty runs or
// encodings are told apart before a colour repeats.
const char* const kRunColors[] = {"#0173B2", "#DE8F05", "#029E73", "#D55E00", "#CC78BC",
                                  "#CA9161", "#FBAFE4", "#949494", "#ECE133", "#56B4E9",
                                  "#66A61E", "#800000", "#008080", "#E41A1C", "#DBDB8D",
                                  "#8DD3C7", "#FB8072", "#808000", "#FF1493", "#00FF7F"};
constexpr int kRunColorCount = static_cast<int>(sizeof kRunColors / sizeof kRunColors[0]);

// Tick labels can reach half their width past the last tick; an invisible right/top axis
// reserves no room for that, so the outermost label would be clipped at the image edge.
const QMargins kMinimumMargins(0, 12, 22, 0);

}  // namespace

QColor paletteColor(int i)
{
    return QColor(kPalette[((i % kPaletteSize) + kPaletteSize) % kPaletteSize]);
}

namespace {
std::map<std::string, int>& runColors()
{
    static std::map<std::string, int> colors;  // key -> palette index; GUI thread only
    return colors;
}
std::map<std::string, std::string>& shownAs()
{
    static std::map<std::string, std::string> aliases;  // run key -> the key it is drawn as
    return aliases;
}
}  // namespace

void showRunColorAs(const std::string& key, const std::string& drawnAs)
{
    if (drawnAs.empty() || drawnAs == key)
        shownAs().erase(key);
    else
        shownAs()[key] = drawnAs;
}

std::string runPaletteColor(int i)
{
    return kRunColors[((i % kRunColorCount) + kRunColorCount) % kRunColorCount];
}

std::string runColor(const std::string& key)
{
    auto& colors = runColors();
    if (const auto it = colors.find(key); it != colors.end())
        return kRunColors[it->second];
    // The least used colour, first in kRunColors' order: unique for the first twenty runs.
    std::vector<int> uses(kRunColorCount, 0);
    for (const auto& [k, i] : colors)
        ++uses[size_t(i)];
    const int pick = int(std::min_element(uses.begin(), uses.end()) - uses.begin());
    colors.emplace(key, pick);
    return kRunColors[pick];
}

std::string shownRunColor(const std::string& key)
{
    const std::string held = assignedRunColor(key);
    return held.empty() ? runColor(key) : held;
}

std::string categoryColor(const std::string& value) { return runColor("group:" + value); }

void fixCategoryColor(const std::string& value, int i)
{
    runColors()["group:" + value] = ((i % kRunColorCount) + kRunColorCount) % kRunColorCount;
}

namespace {
std::map<std::string, std::set<std::string>>& drawnBy()
{
    static std::map<std::string, std::set<std::string>> views;  // view -> the keys it draws
    return views;
}
}  // namespace

void setRunsDrawn(const std::string& view, const std::vector<std::string>& keys)
{
    auto& drawn = drawnBy()[view];
    if (view == "compare")  // its groups: a run it no longer draws is drawn as itself
        for (const auto& key : drawn)
            if (std::find(keys.begin(), keys.end(), key) == keys.end())
                shownAs().erase(key);
    drawn = std::set<std::string>(keys.begin(), keys.end());
}

std::string drawnRunColor(const std::string& key)
{
    for (const auto& [view, keys] : drawnBy())
        if (keys.count(key))
            return assignedRunColor(key);
    return {};
}

std::string assignedRunColor(const std::string& key)
{
    const auto& colors = runColors();
    const auto alias = shownAs().find(key);
    const auto it = colors.find(alias == shownAs().end() ? key : alias->second);
    return it == colors.end() ? std::string() : std::string(kRunColors[it->second]);
}

namespace style {

QFont font(int pointSize, bool bold)
{
    // DejaVu Sans ships with every Debian Qt install, so the offscreen CLI and the studio
    // measure text alike (matplotlib's default family too).
    QFont f(QStringLiteral("DejaVu Sans"), pointSize, bold ? QFont::Bold : QFont::Normal);
    f.setStyleHint(QFont::SansSerif);
    return f;
}

QColor panelColor() { return QColor(0xEA, 0xEA, 0xF2); }
QColor textColor() { return QColor(0x26, 0x26, 0x26); }

QColor colorOf(const std::string& hex, int index)
{
    const QColor c(qs(hex));
    return hex.empty() || !c.isValid() ? paletteColor(index) : c;
}

void styleAxisRect(QCPAxisRect* rect)
{
    rect->setLayer(QStringLiteral("background"));  // a new rect sits on "main", over the spans
    rect->setBackground(panelColor());
    rect->setMinimumMargins(kMinimumMargins);
    for (auto* axis : rect->axes()) {
        axis->setBasePen(Qt::NoPen);
        axis->setTickPen(Qt::NoPen);
        axis->setSubTickPen(Qt::NoPen);
        axis->grid()->setPen(QPen(Qt::white, 1.2));
        axis->grid()->setSubGridVisible(false);
        axis->grid()->setZeroLinePen(Qt::NoPen);
        axis->setTickLabelColor(textColor());
        axis->setLabelColor(textColor());
        axis->setTickLabelFont(font(kTickPt));
        axis->setLabelFont(font(kLabelPt));
        axis->setTickLabelPadding(6);
        axis->setLabelPadding(4);
    }
    rect->axis(QCPAxis::atTop)->setVisible(false);
    rect->axis(QCPAxis::atRight)->setVisible(false);
}

QCPLayoutGrid* beginFigure(QCustomPlot& plot, const std::string& title)
{
    plot.clearItems();
    plot.clearPlottables();
    // Keep the legend alive: clearing the layout would delete it with its axis rect, and
    // QCustomPlot::legend would dangle.
    if (plot.legend && plot.legend->layout())
        plot.legend->layout()->take(plot.legend);
    if (!plot.legend)
        plot.legend = new QCPLegend;
    plot.legend->clearItems();
    plot.legend->setVisible(false);
    plot.plotLayout()->clear();
    // Margin groups are children of the plot, not of the layout: drop the last figure's.
    for (auto* group : plot.findChildren<QCPMarginGroup*>(QString(), Qt::FindDirectChildrenOnly))
        delete group;
    plot.plotLayout()->setRowSpacing(0);
    plot.setBackground(Qt::white);
    int row = 0;
    if (!title.empty()) {
        auto* t = new QCPTextElement(&plot, qs(title), font(kTitlePt, true));
        t->setTextColor(textColor());
        t->setMargins(QMargins(6, 8, 6, 2));
        plot.plotLayout()->addElement(row++, 0, t);
    }
    auto* body = new QCPLayoutGrid;
    body->setColumnSpacing(12);
    body->setMargins(QMargins(2, 0, 2, 6));  // air below the x label, as matplotlib leaves
    plot.plotLayout()->addElement(row, 0, body);
    if (row > 0)
        plot.plotLayout()->setRowStretchFactor(0, 0.001);  // the title keeps its text height
    return body;
}

}  // namespace style
}  // namespace lengen::plots
