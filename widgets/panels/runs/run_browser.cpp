#include "run_browser.h"

#include <algorithm>

#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelection>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPushButton>
#include <QRegularExpression>
#include <QSet>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

#include "ask.h"
#include "lengen/engine/reference_runs.h"
#include "lengen/engine/run_index.h"
#include "run_filter_model.h"
#include "run_notes_dialog.h"
#include "run_table_model.h"
#include "run_tags_dialog.h"
#include "stay_open_menu.h"
#include "table_rows.h"

namespace lengen::ui {

// The runs table over the filter: sorted by creation, newest first; the columns the user hid
// (the header's context menu) kept between sessions.
void RunBrowser::createTable()
{
    m_table = new QTableView;
    m_table->setModel(m_proxy);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(RunTableModel::Created, Qt::DescendingOrder);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_table->verticalHeader()->hide();
    // One line per run: "1500 / 1500" and "finished · eval 12" wrapped onto two and were cut
    // (issue 70, defect 16); compact rows show more runs in the dock.
    useCompactRows(m_table);
    m_table->setTextElideMode(Qt::ElideMiddle);
    m_table->horizontalHeader()->setStretchLastSection(true);
    // The runs' own menu (right-click on a row, issue 72): run_browser_menu.cpp.
    m_table->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_table, &QWidget::customContextMenuRequested, this, [this](const QPoint& at) {
        const QModelIndex row = m_table->indexAt(at);
        if (row.isValid() && !m_table->selectionModel()->isRowSelected(row.row(), {}))
            m_table->selectRow(row.row());  // the row under the pointer, as file managers do
        if (!selectedRuns().isEmpty())
            showRunMenu(m_table->viewport()->mapToGlobal(at));
    });
    // The user chooses the columns (right-click on the header), kept between sessions.
    m_table->horizontalHeader()->setContextMenuPolicy(Qt::CustomContextMenu);
    {
        const QSettings settings;
        // By key; settings written before the keys hold headers, read as their keys.
        const auto hidden = RunTableModel::columnKeys(
            settings
                .value(QStringLiteral("runsList/hiddenColumns"),
                       QStringList{QStringLiteral("backbone"), QStringLiteral("created")})
                .toStringList());
        for (int c = 0; c < RunTableModel::ColumnCount; ++c)
            m_table->setColumnHidden(c, hidden.contains(RunTableModel::columnKey(c)));
    }
    // Chosen config keys and results after the fixed columns (issue 72), kept too.
    m_model->setExtraColumns(
        QSettings().value(QStringLiteral("runsList/extraColumns")).toStringList());
    connect(
        m_table->horizontalHeader(), &QWidget::customContextMenuRequested, this,
        [this](const QPoint& at) { showColumnMenu(m_table->horizontalHeader()->mapToGlobal(at)); });
    m_table->setAlternatingRowColors(true);
}

RunBrowser::RunBrowser(QWidget* parent) : QWidget(parent)
{
    m_model = new RunTableModel(this);
    m_proxy = new RunFilterModel(m_model, this);
    m_proxy->setSortRole(Qt::UserRole);
    createTable();
    const BarButtons buttons = createBar();
    QLabel* empty = layOut(buttons);
    // Rows that land or change (a poll, a rescan, notes saved, a colour swatch) may hold longer
    // tasks, seeds, steps, losses ("last logged 2.843"), statuses and tags than the columns
    // were sized for: every column but the last (which stretches) follows its contents, up to
    // 260 px (cells read "fini…al 2", "230…000", seed "33…88": issue 70 defect 18, issue 80
    // defect 14). Only visible rows are measured, so this stays cheap for 10,000 runs.
    // A column the user resized keeps the width given.
    const auto fitColumns = [this] {
        const int last = m_table->horizontalHeader()->logicalIndex(m_model->columnCount() - 1);
        m_fitting = true;
        for (int c = 0; c < m_model->columnCount(); ++c) {
            if (c == last || m_table->isColumnHidden(c) || m_userSized.contains(c))
                continue;
            m_table->resizeColumnToContents(c);
            m_table->setColumnWidth(c, std::min(m_table->columnWidth(c), 260));
        }
        m_fitting = false;
    };
    connect(m_table->horizontalHeader(), &QHeaderView::sectionResized, this, [this](int c) {
        if (!m_fitting && m_table->horizontalHeader()->isVisible())
            m_userSized.insert(c);
    });
    auto updateEmpty = [this, empty, fitColumns] {
        empty->setVisible(m_model->rowCount() == 0);
        fitColumns();
    };
    connect(m_model, &QAbstractItemModel::dataChanged, this, fitColumns);
    connect(m_model, &QAbstractItemModel::rowsInserted, this, fitColumns);
    // A filter that shows other rows (cleared, widened): they are measured too.
    connect(m_proxy, &QAbstractItemModel::rowsInserted, this, fitColumns);
    connect(m_proxy, &QAbstractItemModel::layoutChanged, this, fitColumns);
    connect(m_model, &QAbstractItemModel::modelReset, this, updateEmpty);
    connect(m_model, &QAbstractItemModel::modelReset, this, &RunBrowser::updateFilterHint);
    updateEmpty();
    wireControls(buttons);
    // Follow the folders: runs another process starts (a folder created after the studio
    // started included) appear, and a running run's steps and status update, without Refresh.
    m_poll.setInterval(3000);
    connect(&m_poll, &QTimer::timeout, m_model, &RunTableModel::pollInBackground);
    connect(&m_poll, &QTimer::timeout, this, &RunBrowser::updateRemovalBar);
    connect(m_model, &RunTableModel::polled, this, [this, updateEmpty](bool changed, qint64 ms) {
        if (changed)
            updateEmpty();
        // A look stats every run's two files, now on a worker: with 10,000 runs a few hundred
        // ms, so the interval grows to keep the disk's share under ~3 % of the time.
        m_poll.setInterval(int(std::max<qint64>(3000, 30 * ms)));
    });
    m_poll.start();
}

// The filter and the buttons beside it (Notes is a member: its text follows the selection).
RunBrowser::BarButtons RunBrowser::createBar()
{
    m_filter = new QLineEdit;
    m_filter->setPlaceholderText(
        tr("Filter: text, or key=value (model.num_hidden_layers=6, pe=rope, tag=baseline)"));
    m_filter->setClearButtonEnabled(true);
    BarButtons b;
    b.add = new QPushButton(tr("Add folder…"));
    b.refresh = new QPushButton(tr("Refresh"));
    b.compare = new QPushButton(tr("Compare selected"));
    b.compare->setToolTip(tr("Overlay the selected runs' evaluation curves"));
    b.overlay = new QPushButton(tr("Overlay training"));
    b.overlay->setToolTip(tr("Draw the selected runs' loss curves over the Train tab's plot"));
    m_notes = new QPushButton(tr("Notes…"));
    return b;
}

// The bar above the filter's hint, the table and the line shown when no run is listed (returned).
QLabel* RunBrowser::layOut(const BarButtons& b)
{
    auto* bar = new QHBoxLayout;
    bar->addWidget(m_filter, 1);
    bar->addWidget(b.add);
    bar->addWidget(b.refresh);
    bar->addWidget(b.compare);
    bar->addWidget(b.overlay);
    bar->addWidget(m_notes);
    auto* empty = new QLabel(tr("No runs in these folders yet — add a folder or train one."));
    empty->setAlignment(Qt::AlignCenter);
    m_filterHint = new QLabel;
    m_filterHint->setObjectName(QStringLiteral("filterHint"));
    m_filterHint->setStyleSheet(QStringLiteral("color: #9A6700"));
    m_filterHint->setVisible(false);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addWidget(m_filterHint);
    layout->addLayout(createRemovalBar());
    layout->addWidget(m_table, 1);
    layout->addWidget(empty);
    return empty;
}

// What the filter, the buttons and the table's selection and double-click do.
void RunBrowser::wireControls(const BarButtons& b)
{
    connect(m_filter, &QLineEdit::textChanged, this, &RunBrowser::setFilterText);
    connect(b.add, &QPushButton::clicked, this, [this] {
        ask::folder(this,
                    tr("Add a runs folder (LenGen runs, or a models/ folder of the Python code)"),
                    QFileInfo(m_model->folders().value(0)).absolutePath(),
                    [this](const QString& dir) { addFolder(dir); });
    });
    connect(b.refresh, &QPushButton::clicked, this, &RunBrowser::refresh);
    connect(b.compare, &QPushButton::clicked, this,
            [this] { Q_EMIT compareRequested(selectedRuns()); });
    connect(b.overlay, &QPushButton::clicked, this,
            [this] { Q_EMIT overlayRequested(selectedRuns()); });
    connect(m_notes, &QPushButton::clicked, this, [this] {
        if (selectedRuns().size() > 1)
            editTagsOfSelected();
        else
            editNotes();
    });
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &RunBrowser::updateNotesButton);
    connect(m_model, &QAbstractItemModel::modelReset, this, &RunBrowser::updateNotesButton);
    updateNotesButton();
    connect(m_table, &QTableView::doubleClicked, this, [this](const QModelIndex& index) {
        Q_EMIT openRequested(m_model->row(m_proxy->mapToSource(index).row()).path);
    });
}

void RunBrowser::addFolder(const QString& folder)
{
    if (engine::isReferenceRunDir(folder.toStdString()) && !QFileInfo::exists(folder + "/run.h5")) {
        Q_EMIT referenceRunsFound(folder, {folder});
        return;
    }
    bool holdsRuns = false;
    std::vector<std::string> found;  // the Python code's runs beside or below
    try {
        const auto scan = engine::scanFolder(folder.toStdString());
        holdsRuns = !scan.runFiles.empty();
        found = scan.referenceRuns;
    } catch (const std::exception&) {  // changed under the walk: listed, and followed
    }
    if (!found.empty()) {
        QStringList dirs;
        for (const auto& d : found)
            dirs << QString::fromStdString(d);
        Q_EMIT referenceRunsFound(folder, dirs);
        // A models/ tree of the Python code holds no run.h5: it is not a LenGen runs folder.
        if (!holdsRuns)
            return;
    }
    auto all = m_model->folders();
    if (!all.contains(folder))
        all << folder;
    m_model->setFolders(all);
    m_table->resizeColumnsToContents();
    // Still followed (a run may land there later), but the user learns it holds none now.
    if (!holdsRuns)
        Q_EMIT folderHoldsNoRuns(folder);
}

void RunBrowser::setFolders(const QStringList& folders)
{
    m_model->setFolders(folders);
    m_table->resizeColumnsToContents();
}

QStringList RunBrowser::folders() const { return m_model->folders(); }

void RunBrowser::refresh() { m_model->refresh(); }

void RunBrowser::follow() { m_model->poll(); }

void RunBrowser::setFilterText(const QString& text)
{
    if (m_filter->text() != text)
        m_filter->setText(text);
    m_proxy->setText(text);
    updateFilterHint();
}

void RunBrowser::updateFilterHint()
{
    const QString hint = m_proxy->hint();
    m_filterHint->setText(hint);
    m_filterHint->setVisible(!hint.isEmpty());
}

void RunBrowser::setColumnShown(int column, bool shown)
{
    m_table->setColumnHidden(column, !shown);
    if (shown)  // as wide as what it shows (Created read "2026-…38:45" beside a spare Notes)
        m_table->resizeColumnToContents(column);
    QSettings().setValue(QStringLiteral("runsList/hiddenColumns"), hiddenColumnNames());
}

QString RunBrowser::filterText() const { return m_filter->text(); }

QStringList RunBrowser::hiddenColumnNames() const
{
    QStringList hidden;
    for (int c = 0; c < RunTableModel::ColumnCount; ++c)
        if (m_table->isColumnHidden(c))
            hidden << RunTableModel::columnKey(c);
    return hidden;
}

void RunBrowser::setHiddenColumnNames(const QStringList& keys)
{
    const QStringList hidden = RunTableModel::columnKeys(keys);
    for (int c = 0; c < RunTableModel::ColumnCount; ++c) {
        const bool hide = hidden.contains(RunTableModel::columnKey(c));
        if (hide != m_table->isColumnHidden(c))
            setColumnShown(c, !hide);
    }
}

std::pair<QString, bool> RunBrowser::sortKey() const
{
    const auto* header = m_table->horizontalHeader();
    const int c = header->sortIndicatorSection();
    const QString key = c < RunTableModel::ColumnCount
                            ? RunTableModel::columnKey(c)
                            : m_model->extraColumns().value(c - RunTableModel::ColumnCount);
    return {key, header->sortIndicatorOrder() == Qt::DescendingOrder};
}

bool RunBrowser::sortBy(const QString& column, bool descending)
{
    int c = RunTableModel::columnOf(column);  // a fixed column's before an extra one's
    if (c < 0 && m_model->extraColumns().contains(column))
        c = RunTableModel::ColumnCount + int(m_model->extraColumns().indexOf(column));
    if (c < 0)
        return false;
    m_table->sortByColumn(c, descending ? Qt::DescendingOrder : Qt::AscendingOrder);
    return true;
}

QStringList RunBrowser::extraColumns() const { return m_model->extraColumns(); }

void RunBrowser::setExtraColumns(const QStringList& keys)
{
    if (keys == m_model->extraColumns())
        return;
    // Columns change by a model reset, which drops the selection: the same runs stay selected.
    const QStringList selected = selectedRuns();
    m_model->setExtraColumns(keys);
    if (!selected.isEmpty())
        selectRuns(selected);
    QSettings().setValue(QStringLiteral("runsList/extraColumns"), keys);
    for (int i = 0; i < keys.size(); ++i)
        m_table->resizeColumnToContents(RunTableModel::ColumnCount + i);
}

bool RunBrowser::columnShown(int column) const { return !m_table->isColumnHidden(column); }

QString RunBrowser::filterHint() const
{
    return m_filterHint->isHidden() ? QString() : m_filterHint->text();
}

int RunBrowser::visibleRows() const { return m_proxy->rowCount(); }

const QSortFilterProxyModel* RunBrowser::shownRuns() const { return m_proxy; }

QStringList RunBrowser::selectedRuns() const
{
    QStringList out;
    for (const auto& index : m_table->selectionModel()->selectedRows())
        out << m_model->row(m_proxy->mapToSource(index).row()).path;
    return out;
}

void RunBrowser::selectRun(const QString& runFile)
{
    const int row = m_model->rowOfPath(runFile);
    if (row < 0)
        return;
    const auto index = m_proxy->mapFromSource(m_model->index(row, 0));
    m_table->selectRow(index.row());
    m_table->scrollTo(index);
}

void RunBrowser::selectRuns(const QStringList& runFiles)
{
    // One pass over the rows and one selection of merged ranges: brushing 10,000 runs in the
    // Hyperparameters tab selects them here without a search per run.
    const QSet<QString> wanted(runFiles.begin(), runFiles.end());
    std::vector<int> rows;
    for (int r = 0; r < m_model->rowCount(); ++r)
        if (wanted.contains(m_model->row(r).path)) {
            const auto index = m_proxy->mapFromSource(m_model->index(r, 0));
            if (index.isValid())  // the filter hides it
                rows.push_back(index.row());
        }
    std::sort(rows.begin(), rows.end());
    QItemSelection selection;
    const int lastColumn = m_proxy->columnCount() - 1;
    for (size_t i = 0; i < rows.size();) {
        size_t j = i;
        while (j + 1 < rows.size() && rows[j + 1] == rows[j] + 1)
            ++j;
        selection.select(m_proxy->index(rows[i], 0), m_proxy->index(rows[j], lastColumn));
        i = j + 1;
    }
    m_table->selectionModel()->select(selection, QItemSelectionModel::ClearAndSelect);
    if (!rows.empty())
        m_table->scrollTo(m_proxy->index(rows.front(), 0));
}

// The button names the run it acts on: "Notes of 3b384440…"; with none or several selected it
// says what it needs.
void RunBrowser::updateNotesButton()
{
    const auto runs = selectedRuns();
    m_notes->setEnabled(!runs.isEmpty());
    if (runs.size() > 1) {
        m_notes->setText(tr("Tags of %n runs…", nullptr, int(runs.size())));
        m_notes->setToolTip(tr("Add or remove tags on the %n selected runs in one step", nullptr,
                               int(runs.size())));
        return;
    }
    if (runs.isEmpty()) {
        m_notes->setText(tr("Notes…"));
        m_notes->setToolTip(tr("Select a run to write its notes and tags, or several to tag them"));
        return;
    }
    const int row = m_model->rowOfPath(runs.front());
    const QString id = row >= 0 ? m_model->row(row).runId : QString();
    m_notes->setText(id.isEmpty() ? tr("Notes…") : tr("Notes of %1…").arg(id));
    m_notes->setToolTip(tr("Notes and tags of %1, stored in its run file").arg(runs.front()));
}

RunNotesDialog* RunBrowser::editNotes()
{
    const auto runs = selectedRuns();
    if (runs.size() != 1)
        return nullptr;
    const int row = m_model->rowOfPath(runs.front());
    if (row < 0)
        return nullptr;
    const auto& r = m_model->row(row);
    const QString label =
        QStringLiteral("%1 %2 seed %3 (%4)").arg(r.task, r.pe).arg(r.seed).arg(r.runId);
    auto* dialog = new RunNotesDialog(r.path, label, r.status == QLatin1String("running"), this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    const QString path = r.path;
    connect(dialog, &QDialog::accepted, this, [this, path] { m_model->rereadRun(path); });
    dialog->open();
    return dialog;
}

RunTagsDialog* RunBrowser::editTagsOfSelected()
{
    const auto runs = selectedRuns();
    if (runs.size() < 2)
        return nullptr;
    QStringList common;  // the tags on every selected row, as the list shows them
    for (const auto& run : runs) {
        const int row = m_model->rowOfPath(run);
        const QStringList tags = row >= 0 ? m_model->row(row).tags : QStringList{};
        if (run == runs.front())
            common = tags;
        else
            common.removeIf([&](const QString& t) { return !tags.contains(t); });
    }
    auto* dialog = new RunTagsDialog(runs, common, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &RunTagsDialog::runsChanged, this, [this](const QStringList& changed) {
        for (const auto& run : changed)
            m_model->rereadRun(run);
    });
    dialog->open();
    return dialog;
}

}  // namespace lengen::ui
