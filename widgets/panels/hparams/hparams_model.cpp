#include "hparams_model.h"

#include <algorithm>

namespace lengen::ui {

figures::HParamsChoice HParamsModel::choiceFor(const engine::RunTable& table) const
{
    return saved(figures::defaultHParamsChoice(table));  // the choices over the table's defaults
}

figures::HParamsChoice HParamsModel::saved(const figures::HParamsChoice& drawn) const
{
    auto c = drawn;
    if (m_axesChosen)
        c.axes = m_kept.axes;
    if (m_colorChosen)
        c.color = m_kept.color;
    c.brushes = m_kept.brushes;
    return c;
}

void HParamsModel::toggleAxis(const engine::RunTable& table, const std::string& name, bool on)
{
    if (!m_axesChosen) {  // the first choice starts from what was drawn
        m_kept.axes = choiceFor(table).axes;
        m_axesChosen = true;
    }
    auto& axes = m_kept.axes;
    axes.erase(std::remove(axes.begin(), axes.end(), name), axes.end());
    if (on) {
        // In the table's order among the chosen columns the table has; before the first chosen
        // column that comes after it there (columns it lacks keep their places).
        const auto columns = figures::axisColumns(table);
        auto rank = [&](const std::string& col) {
            return std::find(columns.begin(), columns.end(), col) - columns.begin();
        };
        const auto mine = rank(name);
        auto at = std::find_if(axes.begin(), axes.end(), [&](const std::string& col) {
            const auto r = rank(col);
            return r < std::ptrdiff_t(columns.size()) && r > mine;
        });
        axes.insert(at, name);
    }
    ++m_revision;
}

void HParamsModel::moveAxis(const engine::RunTable& table, const std::string& name,
                            const std::string& onto)
{
    if (!m_axesChosen) {  // the first choice starts from what was drawn
        m_kept.axes = choiceFor(table).axes;
        m_axesChosen = true;
    }
    auto& axes = m_kept.axes;
    const auto from = std::find(axes.begin(), axes.end(), name);
    const auto to = std::find(axes.begin(), axes.end(), onto);
    if (from == axes.end() || to == axes.end() || from == to)
        return;
    // A rotation of the span between them: the moved axis lands where `onto` was.
    if (from < to)
        std::rotate(from, from + 1, to + 1);
    else
        std::rotate(to, from, from + 1);
    ++m_revision;
}

void HParamsModel::chooseColor(std::string column)
{
    m_kept.color = std::move(column);
    m_colorChosen = true;
    ++m_revision;
}

void HParamsModel::setBrushes(std::vector<figures::HParamsBrush> brushes,
                              const std::vector<std::string>& drawn)
{
    for (const auto& b : m_kept.brushes)
        if (std::find(drawn.begin(), drawn.end(), b.column) == drawn.end())
            brushes.push_back(b);  // on a column the runs shown now lack: kept for its return
    const auto same = [](const figures::HParamsBrush& a, const figures::HParamsBrush& b) {
        return a.column == b.column && a.low == b.low && a.high == b.high &&
               a.lowCategory == b.lowCategory && a.highCategory == b.highCategory;
    };
    if (std::equal(brushes.begin(), brushes.end(), m_kept.brushes.begin(), m_kept.brushes.end(),
                   same))
        return;  // as kept: no new revision (a build's figure stays good)
    m_kept.brushes = std::move(brushes);
    ++m_revision;
}

void HParamsModel::clearBrushes()
{
    m_kept.brushes.clear();
    ++m_revision;
}

void HParamsModel::choose(const figures::HParamsChoice& choice)
{
    m_kept = choice;
    m_axesChosen = m_colorChosen = true;
    ++m_revision;
}

}  // namespace lengen::ui
