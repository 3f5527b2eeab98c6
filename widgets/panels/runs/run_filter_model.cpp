#include "run_filter_model.h"

#include "run_table_model.h"

namespace lengen::ui {

RunFilterModel::RunFilterModel(RunTableModel* runs, QObject* parent)
    : QSortFilterProxyModel(parent), m_runs(runs)
{
    setSourceModel(runs);
}

void RunFilterModel::setText(const QString& text)
{
    m_text = text;
    auto parsed = engine::parseFilter(text.toStdString());  // as `lengen runs --view` reads it
    m_terms = std::move(parsed.terms);
    m_errors.clear();
    for (const auto& e : parsed.errors)
        m_errors << QString::fromStdString(e);
    m_rest = QString::fromStdString(parsed.text);
    invalidateFilter();
}

bool RunFilterModel::filterAcceptsRow(int row, const QModelIndex& parent) const
{
    for (const auto& term : m_terms)
        if (!m_runs->rowMatches(row, term))
            return false;
    if (m_rest.isEmpty())
        return true;
    for (int c = 0; c < m_runs->columnCount(); ++c)
        if (m_runs->index(row, c, parent).data().toString().contains(m_rest, Qt::CaseInsensitive))
            return true;
    return false;
}

// A key=value term on a key no run has is a typo far more often than a question: say so, with
// the nearest key, instead of an empty list (issue 52).
QString RunFilterModel::hint() const
{
    std::vector<const engine::RunIndexEntry*> runs;
    for (int r = 0; r < m_runs->rowCount(); ++r)
        runs.push_back(m_runs->row(r).entry.get());
    QStringList problems = m_errors;
    for (const auto& term : m_terms)
        if (const auto p = engine::filterKeyProblem(runs, term.key); !p.empty() && !runs.empty())
            problems << QString::fromStdString(p);
    return problems.join(QStringLiteral("; "));
}

QStringList RunFilterModel::shownRuns() const
{
    QStringList out;
    for (int r = 0; r < m_runs->rowCount(); ++r)
        if (filterAcceptsRow(r, {}))
            out << m_runs->row(r).path;
    return out;
}

}  // namespace lengen::ui
