#pragma once
// The Runs list's state beside its rows (issue 70): the filter — `key=value` terms (any
// resolved config key, or pe, task, backbone, status, seed, tag, id; numbers compare as
// numbers, `<`, `>=`, ranges; spaces around the operator allowed) that must all hold, the rest
// of the text looked for in every column — the runs it shows, and what it cannot match ("no run
// has the key …; did you mean …?", a word that cannot parse: left out of the filter, so the
// list stays as the rest makes it, issue 80). A proxy over RunTableModel with no widgets: the Runs
// list, the Hyperparameters tab and Compare follow it; tests drive it without a window
// (tst_run_filter_model). GUI thread.

#include <QSortFilterProxyModel>
#include <QStringList>

#include <vector>

#include "lengen/engine/run_index.h"

namespace lengen::ui {

class RunTableModel;

class RunFilterModel final : public QSortFilterProxyModel {
    Q_OBJECT

public:
    RunFilterModel(RunTableModel* runs, QObject* parent = nullptr);
    /// The filter's text, as typed.
    void setText(const QString& text);
    const QString& text() const { return m_text; }
    const std::vector<engine::RunFilterTerm>& terms() const { return m_terms; }
    /// What the filter cannot match, said under it ("" when all of it can): words that look
    /// like terms but cannot be, and keys no listed run has, with the nearest key.
    QString hint() const;
    /// The run files the filter shows, in the source model's order.
    QStringList shownRuns() const;

protected:
    bool filterAcceptsRow(int row, const QModelIndex& parent) const override;

private:
    RunTableModel* m_runs;
    QString m_text, m_rest;
    std::vector<engine::RunFilterTerm> m_terms;
    QStringList m_errors;  ///< words that look like terms but cannot be ("final_loss<abc")
};

}  // namespace lengen::ui
