#include "hparams_runs.h"

#include "hparams_figure.h"

namespace lengen::ui {

bool HParamsRuns::take(Entries runs)
{
    m_stale = false;
    if (runs == m_taken)
        return false;
    m_taken = std::move(runs);
    return true;
}

void HParamsRuns::setTable(std::vector<std::string> paths, engine::RunTable table)
{
    m_paths = std::move(paths);
    m_table = std::move(table);
}

QStringList HParamsRuns::runsInside(const std::vector<char>& inside) const
{
    QStringList out;
    for (size_t r = 0; r < m_paths.size() && r < inside.size(); ++r)
        if (inside[r])
            out << QString::fromStdString(m_paths[r]);
    return out;
}

bool HParamsRuns::askToSelect(const QStringList& runs, bool brushed, bool always)
{
    if (!always && runs == m_asked)
        return false;
    m_asked = runs;
    return always || brushed;
}

QString HParamsRuns::summary(int listed, int inside, bool brushed) const
{
    const int n = int(m_paths.size());
    if (n == 0 && listed > 0)
        return tr("No runs shown: the Runs list's filter hides them all.");
    if (n == 0)
        return tr("No runs listed: add a runs folder in the Runs list.");
    // The exports' title ("40 runs", "12 of 40 runs inside the brushes"), and how to brush.
    const auto title = QString::fromStdString(figures::hparamsTitle(n, inside, brushed));
    return brushed ? title : tr("%1; drag along an axis to brush it").arg(title);
}

}  // namespace lengen::ui
