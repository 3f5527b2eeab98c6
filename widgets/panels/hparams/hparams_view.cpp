#include "hparams_view.h"

#include <QAbstractProxyModel>
#include <QAbstractTableModel>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHash>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QMenu>
#include <QMouseEvent>
#include <QPushButton>
#include <QScrollArea>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QToolButton>

#include <algorithm>
#include <cmath>

#include "ask.h"
#include "export_dialog.h"
#include "figure_provenance.h"
#include "parallel_view.h"
#include "run_table_model.h"
#include "stay_open_menu.h"
#include "table_rows.h"

namespace lengen::ui {

// The runs inside the brushes, a row each, every column of the runs table. Sorted through a
// proxy by Qt::UserRole: the number of a numeric cell, else its text.
class HParamsTableModel final : public QAbstractTableModel {
public:
    using QAbstractTableModel::QAbstractTableModel;
    /// `order`: the table's columns in the order shown (the run, the axes, then the rest).
    void show(const engine::RunTable* table, const std::vector<char>& inside,
              std::vector<int> order = {})
    {
        beginResetModel();
        m_table = table;
        m_columns = std::move(order);
        // Only columns the table has: before any runs it has none, not even the run's (a
        // saved view applied then crashed on column 0, issue 72).
        m_columns.erase(
            std::remove_if(m_columns.begin(), m_columns.end(),
                           [table](int c) { return !table || c >= int(table->columns.size()); }),
            m_columns.end());
        for (int c = 0; table && m_columns.empty() && c < int(table->columns.size()); ++c)
            m_columns.push_back(c);
        m_rows.clear();
        for (size_t r = 0; table && r < inside.size() && r < table->rows.size(); ++r)
            if (inside[r])
                m_rows.push_back(int(r));
        endResetModel();
    }
    int rowCount(const QModelIndex& parent = {}) const override
    {
        return parent.isValid() || !m_table ? 0 : int(m_rows.size());
    }
    int columnCount(const QModelIndex& parent = {}) const override
    {
        return parent.isValid() || !m_table ? 0 : int(m_columns.size());
    }
    QVariant data(const QModelIndex& index, int role) const override
    {
        const auto c = size_t(m_columns[size_t(index.column())]);
        const auto& col = m_table->columns[c];
        const auto& cell = m_table->rows[size_t(m_rows[size_t(index.row())])][c];
        const bool number = col.numeric && std::isfinite(cell.value);
        if (role == Qt::DisplayRole)
            return col.kind == engine::RunTableColumn::Result && number
                       ? QString::fromStdString(engine::shortNumber(cell.value))
                       : QString::fromStdString(cell.text);
        if (role == Qt::UserRole)
            return number ? QVariant(cell.value) : QVariant(QString::fromStdString(cell.text));
        if (role == Qt::TextAlignmentRole && col.numeric)
            return int(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    }
    /// The runs table's row shown at `row`.
    int tableRow(int row) const
    {
        return row >= 0 && size_t(row) < m_rows.size() ? m_rows[size_t(row)] : -1;
    }
    QVariant headerData(int section, Qt::Orientation o, int role) const override
    {
        if (o == Qt::Horizontal && role == Qt::DisplayRole && m_table)
            return QString::fromStdString(
                m_table->columns[size_t(m_columns[size_t(section)])].name);
        return QAbstractTableModel::headerData(section, o, role);
    }

private:
    const engine::RunTable* m_table = nullptr;
    std::vector<int> m_rows;     // table rows shown
    std::vector<int> m_columns;  // table columns shown, in order
};

namespace {
QString runsText(int n)
{
    return n == 1 ? HParamsView::tr("1 run") : HParamsView::tr("%1 runs").arg(n);
}

}  // namespace

HParamsView::HParamsView(QWidget* parent)
    : QWidget(parent), m_build(this, [this](HParamsBuild built, bool) { apply(std::move(built)); }),
      m_plot(new ParallelView), m_model(new HParamsTableModel(this)),
      m_proxy(new QSortFilterProxyModel(this)), m_tableView(new QTableView),
      m_axes(new QToolButton), m_color(new QComboBox), m_summary(new QLabel),
      m_clear(new QPushButton(tr("Clear brushes"))), m_compare(new QPushButton(tr("Compare"))),
      m_export(new QPushButton(tr("Export…")))
{
    m_axes->setText(tr("Axes"));
    m_axes->setToolTip(tr("The columns drawn as axes, in the table's order"));
    m_axes->setPopupMode(QToolButton::InstantPopup);
    // Room for the word and the menu's arrow (they overlapped, seen under Xvfb).
    m_axes->setMinimumWidth(m_axes->fontMetrics().horizontalAdvance(m_axes->text()) + 34);
    m_axes->setMenu(new StayOpenMenu(m_axes));
    m_color->setToolTip(tr("The column whose value colours each run"));
    m_color->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    setUpTable();
    auto* bar = new QHBoxLayout;
    bar->addWidget(m_axes);
    bar->addWidget(new QLabel(tr("Colour by")));
    bar->addWidget(m_color);
    bar->addWidget(m_summary, 1);
    bar->addWidget(m_clear);
    bar->addWidget(m_compare);
    bar->addWidget(m_export);
    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(m_plot);
    split->addWidget(m_tableView);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    split->setChildrenCollapsible(false);
    // In a scroll area: the plot's and the table's minimums scroll in a short window instead
    // of bounding the Runs dock below the tabs (it showed 3 rows at 1280 x 800).
    auto* scroll = new QScrollArea;
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setWidget(split);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addWidget(scroll, 1);

    connect(m_plot, &ParallelView::brushMoved, this, &HParamsView::updateSummary);
    // An axis's name dragged onto another axis: the chosen order (issue 72).
    connect(m_plot, &ParallelView::axisMoveRequested, this,
            [this](const QString& name, const QString& onto) {
                m_choices.moveAxis(m_runs.table(), name.toStdString(), onto.toStdString());
                redraw();
            });
    // The table's current run is drawn over the others in the figure.
    connect(m_tableView->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
                m_plot->setHighlight(m_model->tableRow(m_proxy->mapToSource(current).row()));
            });
    connect(m_plot, &ParallelView::brushFinished, this, [this] {
        keepBrushes();
        showTable();
        updateSummary();
        selectInside(true);
    });
    connect(m_color, &QComboBox::activated, this, [this] {
        m_choices.chooseColor(m_color->currentText().toStdString());
        redraw();
    });
    connect(m_clear, &QPushButton::clicked, this, [this] {
        m_choices.clearBrushes();  // those on columns not drawn now too
        m_plot->clearBrushes();
        updateSummary();
    });
    connect(m_compare, &QPushButton::clicked, this,
            [this] { Q_EMIT compareRequested(insideRuns()); });
    connect(m_export, &QPushButton::clicked, this, &HParamsView::exportWithDialog);
    m_pull.setSingleShot(true);
    m_pull.setInterval(1000);
    connect(&m_pull, &QTimer::timeout, this, &HParamsView::pullRuns);
    updateSummary();
}

// The runs' table below the figure: sorted by value, a run per compact row, and room for four
// of them in a small window (the page scrolls below that).
void HParamsView::setUpTable()
{
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(Qt::UserRole);
    m_tableView->setModel(m_proxy);
    m_tableView->setSortingEnabled(true);
    m_tableView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_tableView->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_tableView->verticalHeader()->hide();
    useCompactRows(m_tableView);
    m_tableView->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    m_tableView->horizontalHeader()->setResizeContentsPrecision(50);  // 50 rows, not 10,000
    m_tableView->setMinimumHeight(heightForRows(m_tableView, 4));
}

// The table model and its view are children, deleted after the members: they must stop reading
// the runs table before it goes.
HParamsView::~HParamsView() { m_model->show(nullptr, {}); }

// What the user chose stays; what they did not follows the runs (a key that starts to vary is
// drawn).
HParamsBuild
HParamsView::build(const std::vector<std::shared_ptr<const engine::RunIndexEntry>>& runs,
                   const HParamsModel& choices)
{
    HParamsBuild b;
    std::vector<const engine::RunIndexEntry*> entries;
    std::vector<std::string> labels;
    for (const auto& r : runs) {
        entries.push_back(r.get());
        b.paths.push_back(r->path);
        labels.push_back(r->info.runId);
    }
    b.table = engine::runTable(entries, labels, {});
    b.spec = figures::hparamsSpec(b.table, choices.choiceFor(b.table));
    b.revision = choices.revision();
    return b;
}

void HParamsView::setRuns(std::vector<engine::RunIndexEntry> runs)
{
    std::vector<std::shared_ptr<const engine::RunIndexEntry>> shared;
    for (auto& r : runs)
        shared.push_back(std::make_shared<const engine::RunIndexEntry>(std::move(r)));
    apply(build(shared, m_choices));
}

void HParamsView::apply(HParamsBuild built)
{
    // The axes, colour and brushes as they are now: the user may have chosen or dragged while
    // the worker built (a build lands about every second while runs train).
    keepBrushes();  // a brush being dragged is the model's now
    if (built.revision != m_choices.revision())
        built.spec = figures::hparamsSpec(built.table, m_choices.choiceFor(built.table));
    const auto kept = tableState();
    m_model->show(nullptr, {});  // it reads the table about to be replaced
    m_runs.setTable(std::move(built.paths), std::move(built.table));
    m_plot->setSpec(std::move(built.spec));
    showTable(kept);
    updateAxesMenu();
    updateSummary();
    selectInside(false);  // a run that landed inside the brushes joins the selection
}

HParamsView::TableState HParamsView::tableState() const
{
    TableState t;
    auto* header = m_tableView->horizontalHeader();
    for (int c = 0; c < m_model->columnCount(); ++c)
        t.widths[m_model->headerData(c, Qt::Horizontal, Qt::DisplayRole).toString()] =
            header->sectionSize(c);
    if (header->sortIndicatorSection() >= 0 &&
        header->sortIndicatorSection() < m_model->columnCount())
        t.sortedBy =
            m_model->headerData(header->sortIndicatorSection(), Qt::Horizontal, Qt::DisplayRole)
                .toString();
    t.order = header->sortIndicatorOrder();
    return t;
}

// The runs inside the brushes in the table, keeping what the user set by column name: a reset
// model forgets its columns' widths and moves the sort to whatever column has that index now.
void HParamsView::showTable(std::optional<TableState> kept)
{
    if (!kept)
        kept = tableState();
    m_model->show(&m_runs.table(), m_plot->inside(), columnOrder());
    auto* header = m_tableView->horizontalHeader();
    bool fresh = false;
    for (int c = 0; c < m_model->columnCount(); ++c) {
        const auto name = m_model->headerData(c, Qt::Horizontal, Qt::DisplayRole).toString();
        if (kept->widths.contains(name))
            header->resizeSection(c, kept->widths.value(name));
        else
            fresh = true;
    }
    if (fresh && kept->widths.isEmpty())  // the first table: fitted to its contents
        m_tableView->resizeColumnsToContents();
    else if (fresh)
        for (int c = 0; c < m_model->columnCount(); ++c)
            if (!kept->widths.contains(
                    m_model->headerData(c, Qt::Horizontal, Qt::DisplayRole).toString()))
                m_tableView->resizeColumnToContents(c);
    for (int c = 0; c < m_model->columnCount(); ++c)
        if (m_model->headerData(c, Qt::Horizontal, Qt::DisplayRole).toString() == kept->sortedBy)
            m_tableView->sortByColumn(c, kept->order);
}

// The Runs list selects the runs inside the brushes, none when there is no brush (clearing the
// brushes does not select every run). Unless `always`, only when that set changed.
void HParamsView::selectInside(bool always)
{
    const bool brushed = !m_plot->spec().brushes.empty();
    const QStringList runs = brushed ? insideRuns() : QStringList();
    if (m_runs.askToSelect(runs, brushed, always))
        Q_EMIT selectRequested(runs);
}

void HParamsView::followRuns(const RunTableModel& model, const QAbstractProxyModel* shown)
{
    m_source = &model;
    m_shown = shown;
    auto changed = [this] {
        if (isVisible())
            m_pull.start();
        else
            m_runs.markStale();
    };
    connect(&model, &QAbstractItemModel::modelReset, this, changed);
    connect(&model, &QAbstractItemModel::rowsInserted, this, changed);
    connect(&model, &QAbstractItemModel::rowsRemoved, this, changed);
    connect(&model, &QAbstractItemModel::dataChanged, this, changed);
    if (shown) {  // the Runs list's filter: typing in it changes the runs shown here
        connect(shown, &QAbstractItemModel::modelReset, this, changed);
        connect(shown, &QAbstractItemModel::rowsInserted, this, changed);
        connect(shown, &QAbstractItemModel::rowsRemoved, this, changed);
        connect(shown, &QAbstractItemModel::layoutChanged, this, changed);
    }
    m_runs.markStale();
}

void HParamsView::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    if (m_runs.stale())
        pullRuns();
}

// The Runs list's entries are shared, immutable values: the worker reads them while the list
// moves on. At 10,000 runs the table takes about 150 ms, which the GUI thread does not wait for.
void HParamsView::pullRuns()
{
    if (!m_source)
        return;
    std::vector<std::shared_ptr<const engine::RunIndexEntry>> runs;
    runs.reserve(size_t(m_source->rowCount()));
    for (int r = 0; r < m_source->rowCount(); ++r)
        if (m_source->row(r).error.isEmpty() &&  // a damaged run has nothing to draw
            (!m_shown || m_shown->mapFromSource(m_source->index(r, 0)).isValid()))
            runs.push_back(m_source->row(r).entry);
    if (!m_runs.take(runs))  // the same entries (a sort, a swatch): the same table
        return;
    m_build.submit([runs = std::move(runs), choices = m_choices] { return build(runs, choices); });
}

figures::HParamsChoice HParamsView::choice() const
{
    figures::HParamsChoice c;
    const auto& spec = m_plot->spec();
    for (const auto& a : spec.axes)
        c.axes.push_back(a.name);
    if (spec.colorAxis >= 0)
        c.color = spec.axes[size_t(spec.colorAxis)].name;
    c.brushes = figures::namedBrushes(spec);
    return c;
}

void HParamsView::setChoice(const figures::HParamsChoice& choice)
{
    m_choices.choose(choice);
    draw();  // its brushes, not the figure's
}

void HParamsView::keepBrushes()
{
    std::vector<std::string> drawn;
    for (const auto& a : m_plot->spec().axes)
        drawn.push_back(a.name);
    m_choices.setBrushes(figures::namedBrushes(m_plot->spec()), drawn);
}

void HParamsView::redraw()
{
    keepBrushes();
    draw();
}

void HParamsView::draw()
{
    m_plot->setSpec(figures::hparamsSpec(m_runs.table(), m_choices.choiceFor(m_runs.table())));
    showTable();
    updateAxesMenu();
    updateSummary();
}

std::vector<int> HParamsView::columnOrder() const
{
    std::vector<int> order = {0};  // the run
    for (const auto& a : m_plot->spec().axes)
        for (size_t c = 1; c < m_runs.table().columns.size(); ++c)
            if (m_runs.table().columns[c].name == a.name)
                order.push_back(int(c));
    for (size_t c = 1; c < m_runs.table().columns.size(); ++c)
        if (std::find(order.begin(), order.end(), int(c)) == order.end())
            order.push_back(int(c));
    return order;
}

void HParamsView::updateAxesMenu()
{
    QMenu* menu = m_axes->menu();
    const auto shown = choice();
    const auto columns = figures::axisColumns(m_runs.table());
    QStringList names;
    for (const auto& name : columns)
        names << QString::fromStdString(name);
    QStringList listed;
    for (const auto* a : menu->actions())
        listed << a->text();
    if (listed != names) {  // other columns: the menu anew (an open menu keeps its actions)
        menu->clear();
        for (const auto& name : columns) {
            auto* action = menu->addAction(QString::fromStdString(name));
            action->setCheckable(true);
            connect(action, &QAction::toggled, this, [this, name](bool on) {
                m_choices.toggleAxis(m_runs.table(), name, on);
                redraw();
            });
        }
    }
    for (auto* a : menu->actions()) {
        const QSignalBlocker block(a);
        a->setChecked(std::count(shown.axes.begin(), shown.axes.end(), a->text().toStdString()) >
                      0);
    }
    // Any axis colours the runs: a number along a scale, a category (pe, task) by its colour.
    m_color->clear();
    for (const auto& a : m_plot->spec().axes)
        m_color->addItem(QString::fromStdString(a.name));
    m_color->setCurrentText(QString::fromStdString(shown.color));
}

QStringList HParamsView::insideRuns() const { return m_runs.runsInside(m_plot->inside()); }

QString HParamsView::summaryText() const
{
    return m_runs.summary(m_source ? m_source->rowCount() : 0, m_plot->insideCount(),
                          !m_plot->spec().brushes.empty());
}

void HParamsView::updateSummary()
{
    m_summary->setText(summaryText());
    const int inside = m_plot->insideCount();
    m_compare->setText(tr("Compare %1").arg(runsText(inside)));
    m_compare->setToolTip(tr("Opens the runs inside the brushes in Compare"));
    m_compare->setEnabled(inside > 0);
    // Kept brushes on columns the runs shown lack count too: Clear forgets them.
    m_clear->setEnabled(!m_plot->spec().brushes.empty() || !m_choices.kept().brushes.empty());
    m_export->setEnabled(!m_runs.paths().empty());
}

bool HParamsView::exportTo(const QString& path, int dpi, QString* error)
{
    const auto format = plots::formatFromPath(path);
    if (!format) {
        if (error)
            *error = tr("cannot write %1: use .png, .svg, .pdf, .csv or .tex").arg(path);
        return false;
    }
    auto spec = m_plot->spec();
    spec.title = figures::hparamsTitle(spec);
    const auto r = plots::exportParallel(spec, path, *format, dpi);
    if (!r.ok) {
        if (error)
            *error = r.error;
        return false;
    }
    try {
        figures::writeProvenance(path.toStdString(),
                                 figures::hparamsProvenance(m_runs.paths(), m_runs.table(), spec));
    } catch (const std::exception& e) {
        if (error)
            *error = QString::fromStdString(e.what());
        return false;
    }
    return true;
}

void HParamsView::exportWithDialog()
{
    askExportTarget(this, tr("Export hyperparameters"), QStringLiteral("hparams.png"),
                    [this](const ExportChoice& target) {
                        QString error;
                        const bool ok = exportTo(target.path, target.dpi, &error);
                        if (ok)
                            Q_EMIT statusMessage(tr("Exported %1").arg(target.path));
                        reportExport(this, ok, error);
                    });
}

}  // namespace lengen::ui
