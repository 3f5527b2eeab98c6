#include "sweeps_view.h"
#include "ask.h"
#include "figure_provenance.h"
#include "lengen/engine/seed_stats.h"

#include <algorithm>

#include <QApplication>
#include <QComboBox>
#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSpinBox>
#include <QSplitter>
#include <QStackedWidget>
#include <QStandardPaths>
#include <QTableWidget>
#include <QThread>
#include <QTimer>
#include <QVBoxLayout>

#include <fstream>
#include <set>
#include <utility>

#include "export_dialog.h"
#include "figure_builder.h"
#include "figure_export.h"
#include "layout_check.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/sweep_jobs.h"
#include "plot_style.h"
#include "qcp.h"
#include "sweep_dialogs.h"
#include "sweep_figures.h"

namespace lengen::ui {

namespace {

// The cell's colour is its most pressing seed's: failed, running, stopped, pending, done.
QColor stateColour(engine::SweepCellState worst)
{
    switch (worst) {
    case engine::SweepCellState::Failed: return QColor(0xF4, 0xC7, 0xC3);
    case engine::SweepCellState::Running: return QColor(0xC6, 0xDB, 0xEF);
    case engine::SweepCellState::Requeued: return QColor(0xDA, 0xD4, 0xEC);
    case engine::SweepCellState::Stopped: return QColor(0xFD, 0xE2, 0xA7);
    case engine::SweepCellState::Cancelled: return QColor(0xE0, 0xE0, 0xE0);
    case engine::SweepCellState::Pending: return QColor(0xEE, 0xEE, 0xEE);
    case engine::SweepCellState::Done: break;
    }
    return QColor(0xC7, 0xE9, 0xC0);
}

// LocalSweepOptions::members: cells of one config (fresh, or stopped at one step) trained as one
// batched model.
QSpinBox* membersBox()
{
    auto* box = new QSpinBox;
    box->setObjectName(QStringLiteral("sweepMembers"));
    box->setRange(1, 64);
    box->setPrefix(SweepsView::tr("members "));
    box->setToolTip(SweepsView::tr(
        "Fresh cells of one config, seed apart, trained in one process as one batched model "
        "(each with its own run, checkpoints and stages). Pays off on a GPU; on the CPU one "
        "cell a process (1) is faster"));
    return box;
}

// The number of cells Run here trains at once on this machine.
QSpinBox* sweepsJobsBox()
{
    auto* box = new QSpinBox;
    box->setRange(1, 64);
    box->setValue(std::max(1, QThread::idealThreadCount()));
    box->setPrefix(SweepsView::tr("jobs "));
    box->setToolTip(
        SweepsView::tr("Cells at once on this machine (each with cores / jobs threads)"));
    return box;
}

// The band over seeds the aggregate draws (seed_stats.h), auto first.
QComboBox* sweepsBandBox()
{
    auto* box = new QComboBox;
    box->setObjectName(QStringLiteral("sweepBand"));
    for (auto [text, kind] : {std::pair{SweepsView::tr("auto band"), engine::BandKind::Auto},
                              {SweepsView::tr("bootstrap 5–95 %"), engine::BandKind::Bootstrap},
                              {SweepsView::tr("mean ± SD"), engine::BandKind::StdDev},
                              {SweepsView::tr("mean ± SE"), engine::BandKind::StdErr},
                              {SweepsView::tr("min–max"), engine::BandKind::MinMax}})
        box->addItem(text, int(kind));
    box->setToolTip(SweepsView::tr(
        "The band over seeds: auto is bootstrap from 3 seeds, else min–max; one seed has none. "
        "Choosing one aggregates again"));
    return box;
}

}  // namespace

SweepsView::SweepsView(QWidget* parent) : QWidget(parent)
{
    auto* open = new QPushButton(tr("Open sweep…"));
    auto* create = new QPushButton(tr("New sweep…"));
    create->setToolTip(
        tr("A grid of PEs × seeds (× tasks, × config values) from the Set up tab's config"));
    QHBoxLayout* bar = buildBar(open, create);
    buildBody(bar);
    m_timer = new QTimer(this);
    m_timer->setInterval(2000);
    connect(m_timer, &QTimer::timeout, this, &SweepsView::refresh);
    wireControls(open, create);
    for (auto* b : {m_run, m_stop, m_submit, m_aggregateButton, m_export})
        b->setEnabled(false);
    drawFigure();  // the sentence of an empty tab
}

// The bar's controls after Open and New sweep (the run's, the aggregate's, the figure's), and
// the bar that holds them all.
QHBoxLayout* SweepsView::buildBar(QPushButton* open, QPushButton* create)
{
    m_jobs = sweepsJobsBox();
    m_members = membersBox();
    m_run = new QPushButton(tr("Run here"));
    m_stop = new QPushButton(tr("Stop"));
    m_stop->setToolTip(tr("Every running cell writes its checkpoint; Run here resumes them"));
    m_submit = new QPushButton(tr("Submit to Slurm…"));
    m_aggregateButton = new QPushButton(tr("Aggregate"));
    m_aggregateButton->setToolTip(
        tr("Mean over seeds with a band (bootstrap from 3 seeds, else min–max); "
           "writes aggregate.h5"));
    m_band = sweepsBandBox();
    m_method = new QComboBox;
    // Wide enough for the longest method name ("ood_length" was cut to "ood_leng").
    m_method->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_method->setMinimumContentsLength(14);
    m_export = new QPushButton(tr("Export…"));
    auto* bar = new QHBoxLayout;
    for (QWidget* w : std::initializer_list<QWidget*>{open, create, m_jobs, m_members, m_run,
                                                      m_stop, m_submit, m_aggregateButton, m_band})
        bar->addWidget(w);
    bar->addStretch();
    bar->addWidget(new QLabel(tr("Method:")));
    bar->addWidget(m_method);
    bar->addWidget(m_export);
    return bar;
}

// Under the bar: the title, the summary line, and the grid above its figure.
void SweepsView::buildBody(QHBoxLayout* bar)
{
    m_title = new QLabel(
        tr("Open a sweep folder, or make one from the Set up tab's config with “New sweep…”."));
    m_summary = new QLabel;
    m_summary->setObjectName(QStringLiteral("sweepSummary"));
    m_grid = new QTableWidget;
    m_grid->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_grid->setSelectionMode(QAbstractItemView::SingleSelection);
    m_grid->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    m_grid->verticalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    m_grid->setToolTip(tr("✔ done  ▶ running  ■ stopped  · pending  ✘ failed — one mark per seed; "
                          "double-click a cell to open its runs"));
    // Rows as tall as a line of marks: the grid takes what its rows need, the figure the rest
    // (issue 80, defect 9: stretched rows left the figure 20 px).
    m_grid->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_grid->verticalHeader()->setDefaultSectionSize(fontMetrics().height() * 2);
    m_grid->setSizeAdjustPolicy(QAbstractScrollArea::AdjustToContents);
    m_grid->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Maximum);
    m_plot = new QCustomPlot;
    // The figure scrolls when its panels need more room than the tab has; without a figure a
    // sentence says what brings one (an empty tab showed blank 0-5 axes).
    m_plotScroll = new QScrollArea;
    m_plotScroll->setObjectName(QStringLiteral("sweepFigureScroll"));
    m_plotScroll->setWidgetResizable(true);
    m_plotScroll->setFrameShape(QFrame::NoFrame);
    m_plotScroll->setWidget(m_plot);
    m_noFigure = new QLabel;
    m_noFigure->setObjectName(QStringLiteral("sweepNoFigure"));
    m_noFigure->setAlignment(Qt::AlignCenter);
    m_noFigure->setWordWrap(true);
    m_figureStack = new QStackedWidget;
    m_figureStack->addWidget(m_noFigure);
    m_figureStack->addWidget(m_plotScroll);
    // The figure scrolls within this (a panel row needs kPanelRowHeight): the tab leaves the
    // Runs dock its room at 1280 x 800.
    m_figureStack->setMinimumHeight(plots::kPlotMinHeight * 3 / 4);
    auto* split = new QSplitter(Qt::Vertical);
    split->setObjectName(QStringLiteral("sweepGridFigure"));
    split->addWidget(m_grid);
    split->addWidget(m_figureStack);
    split->setStretchFactor(0, 0);
    split->setStretchFactor(1, 1);
    split->setChildrenCollapsible(false);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addWidget(m_title);
    layout->addWidget(m_summary);
    layout->addWidget(split, 1);
}

// What the bar's buttons, the band, the method and the grid do.
void SweepsView::wireControls(QPushButton* open, QPushButton* create)
{
    connect(open, &QPushButton::clicked, this, [this] {
        // Beside the sweep shown (issue 80, defect 27: inside it, where no other sweep is), else
        // where New sweep writes (under the Runs list's folders).
        const QString start = !m_model.dir().isEmpty() ? QFileInfo(m_model.dir()).absolutePath()
                                                       : QFileInfo(proposedFolder()).absolutePath();
        ask::folder(this, tr("Open a sweep folder"), start,
                    [this](const QString& dir) { setSweep(dir); });
    });
    connect(create, &QPushButton::clicked, this, &SweepsView::newSweep);
    connect(m_run, &QPushButton::clicked, this, &SweepsView::runHere);
    connect(m_stop, &QPushButton::clicked, this, &SweepsView::stopRun);
    connect(m_submit, &QPushButton::clicked, this, &SweepsView::submit);
    connect(m_aggregateButton, &QPushButton::clicked, this, &SweepsView::aggregate);
    connect(m_band, &QComboBox::currentIndexChanged, this, [this] {
        if (m_model.aggregate())
            aggregate();
    });
    connect(m_method, &QComboBox::currentTextChanged, this, &SweepsView::drawFigure);
    connect(m_grid, &QTableWidget::cellDoubleClicked, this, &SweepsView::cellActivated);
    connect(m_export, &QPushButton::clicked, this, [this] {
        if (!m_model.figure())
            return Q_EMIT statusMessage(tr("Nothing to export: aggregate the sweep first"));
        askExportTarget(this, tr("Export the sweep's grid figure"),
                        QStringLiteral("grid_%1.png").arg(m_method->currentText()),
                        [this](const ExportChoice& choice) {
                            QString error;
                            reportExport(this, exportTo(choice.path, choice.dpi, &error), error);
                        });
    });
}

// A sweep job still running belongs to the controller, which stops it (every cell writes its
// checkpoint) and waits for it when it is destroyed.
SweepsView::~SweepsView() = default;

void SweepsView::setBaseConfig(std::function<SweepBase()> provider)
{
    m_baseConfig = std::move(provider);
}

bool SweepsView::setSweep(const QString& dir)
{
    try {
        const std::string root = engine::locateSweep(dir.toStdString());
        m_model.setSweep(dir, engine::readSweepIndex(root), root);
    } catch (const std::exception& e) {
        Q_EMIT statusMessage(tr("Not a sweep: %1").arg(QString::fromUtf8(e.what())));
        return false;
    }
    m_grid->clear();
    m_grid->setRowCount(int(m_model.rowHeaders().size()));
    m_grid->setColumnCount(int(m_model.columnHeaders().size()));
    m_grid->setVerticalHeaderLabels(m_model.rowHeaders());
    m_grid->setHorizontalHeaderLabels(m_model.columnHeaders());
    // As tall as its rows (it scrolls itself past that): the figure keeps the rest.
    m_grid->setMaximumHeight(m_grid->horizontalHeader()->sizeHint().height() +
                             m_grid->verticalHeader()->length() + 2 * m_grid->frameWidth() + 4);
    m_title->setText(m_model.title());
    for (auto* b : {m_run, m_submit, m_aggregateButton})
        b->setEnabled(true);
    refresh();
    const QString agg = QString::fromStdString(engine::aggregateFileFor(dir.toStdString()));
    if (QFileInfo::exists(agg)) {
        try {
            m_model.setAggregate(engine::readAggregate(agg.toStdString()));
        } catch (const std::exception& e) {
            Q_EMIT statusMessage(
                tr("Aggregate file not read: %1").arg(QString::fromUtf8(e.what())));
        }
    }
    // Nothing of the sweep shown before stays (found in the Xvfb walk): its figure's scroll
    // position, and the status bar's word on it ("aggregate sweepC…" over another sweep).
    m_plotScroll->verticalScrollBar()->setValue(0);
    m_plotScroll->horizontalScrollBar()->setValue(0);
    Q_EMIT statusMessage(tr("Showing the sweep %1").arg(QDir(dir).dirName()));
    if (!m_model.aggregate() && m_model.doneCells() > 0)
        aggregate();  // done cells but no aggregate file yet: the figure from what is there
    else
        drawFigure();
    m_timer->start();
    return true;
}

// Each grid square as the model says: its cells' marks, coloured by the most urgent state,
// their states in the tooltip.
void SweepsView::paintGrid()
{
    for (int r = 0; r < m_grid->rowCount(); ++r)
        for (int c = 0; c < m_grid->columnCount(); ++c) {
            const auto sq = m_model.square(r, c);
            auto* item = new QTableWidgetItem(sq.text);
            item->setTextAlignment(Qt::AlignCenter);
            if (sq.cells.empty())
                item->setForeground(palette().color(QPalette::Disabled, QPalette::Text));
            else
                item->setBackground(stateColour(sq.worst));
            item->setToolTip(sq.tip);
            m_grid->setItem(r, c, item);
        }
}

// The stopped cells' resume plan, read again only when which cells are stopped changes (it
// reads each stopped cell's checkpoint step).
void SweepsView::updateResumePlan(const std::string& root,
                                  const std::vector<engine::CellStatus>& cells)
{
    // Stopped and cancelled alike: the next run resumes both (as `sweep status` says it).
    std::vector<std::string> stopped;
    for (const auto& c : cells)
        if (c.cell && (c.state == engine::SweepCellState::Stopped ||
                       c.state == engine::SweepCellState::Cancelled))
            stopped.push_back(c.cell->name);
    if (!m_model.stoppedCellsChanged(std::move(stopped)))
        return;
    QStringList plan;
    try {
        for (const auto& line : engine::stoppedMembersPlan(root, cells))
            plan << QString::fromStdString(line);
    } catch (const std::exception&) {
        // a cell being written: the next look says it
    }
    m_model.setResumePlan(plan);
}

void SweepsView::refresh()
{
    if (!m_model.index())
        return;
    std::vector<engine::CellStatus> all;
    std::string root;
    try {
        root = engine::locateSweep(m_model.dir().toStdString());
        all = engine::sweepStatus(root, *m_model.index());
    } catch (const std::exception& e) {
        return Q_EMIT statusMessage(tr("Sweep not read: %1").arg(QString::fromUtf8(e.what())));
    }
    askScheduler(root);
    try {  // the jobs recorded in the folder, and the scheduler's word as last heard
        engine::mergeJobStates(root, all, m_model.schedulerStates());
    } catch (const std::exception& e) {
        Q_EMIT statusMessage(tr("Sweep jobs not read: %1").arg(QString::fromUtf8(e.what())));
    }
    updateResumePlan(root, all);
    const bool ended = m_model.setStatuses(std::move(all));
    paintGrid();
    if (ended)  // a cell that finished since the last look joins the figure
        aggregate();
    const bool running = runningHere();
    const QString behind = queuedBehind();
    m_summary->setToolTip(m_model.summaryTip(m_model.schedulerNote()));
    // Another sweep running here stays reachable: named, with where to act on it.
    const QStringList others = m_model.otherRunsHere(root);
    m_summary->setText(
        m_model.summary(running, behind) +
        (others.isEmpty()
             ? QString()
             : tr(" — also running here: %1 (Jobs panel)").arg(others.join(QStringLiteral(", ")))));
    m_run->setEnabled(m_model.runHere(root) == 0);     // queued or running: not a second time
    m_stop->setEnabled(running || !behind.isEmpty());  // a queued run can be taken back
    m_stop->setText(behind.isEmpty() ? tr("Stop") : tr("Cancel"));
}

void SweepsView::cellActivated(int row, int column)
{
    if (m_model.square(row, column).cells.empty())
        return;
    const QStringList runs = m_model.runsAt(row, column);
    if (runs.isEmpty())
        return Q_EMIT statusMessage(tr("No run in this cell yet"));
    if (runs.size() == 1)
        Q_EMIT openRunRequested(runs.front());
    else
        Q_EMIT compareRequested(runs);
}

void SweepsView::drawFigure()
{
    const QSignalBlocker block(m_method);
    const QString chosen = m_method->currentText();
    m_method->clear();
    m_method->addItems(m_model.aggregateMethods());
    const int at = m_method->findText(chosen.isEmpty() ? QStringLiteral("ood_length") : chosen);
    m_method->setCurrentIndex(at >= 0 ? at : 0);
    try {
        m_model.drawFigure(m_method->currentText().toStdString());
    } catch (const std::exception& e) {
        Q_EMIT statusMessage(QString::fromUtf8(e.what()));
    }
    if (m_model.figure()) {
        // Every panel a readable data area (the grid's columns beside the shared legend).
        const int panels = int(m_model.figure()->panels.size());
        const int columns = std::max(1, std::min(m_model.figure()->columns, panels));
        const int rows = (panels + columns - 1) / columns;
        m_plot->setMinimumSize(plots::gridMinimumWidth(columns),
                               plots::gridMinimumHeight(rows, columns));
        plots::buildGrid(*m_plot, *m_model.figure());
        m_figureStack->setCurrentWidget(m_plotScroll);
    } else {  // a sentence, not empty axes
        m_noFigure->setText(m_model.index()
                                ? tr("The grid figure appears once cells are evaluated "
                                     "(Aggregate, or automatically as cells finish).")
                                : tr("No sweep shown. Open sweep… shows a sweep folder's grid of "
                                     "cells and, once they are evaluated, its figure; New "
                                     "sweep… makes one from the Set up tab's config."));
        m_figureStack->setCurrentWidget(m_noFigure);
    }
    m_export->setEnabled(bool(m_model.figure()));
}

bool SweepsView::exportTo(const QString& path, int dpi, QString* error)
{
    if (!m_model.figure()) {
        if (error)
            *error = tr("Nothing to export: aggregate the sweep first");
        return false;
    }
    const auto format = plots::formatFromPath(path);
    const auto result =
        plots::exportGrid(*m_model.figure(), path, format.value_or(plots::Format::Png), dpi);
    if (!result.ok && error)
        *error = result.error;
    if (result.ok &&
        m_model.aggregate()) {  // what made it, as `lengen export SWEEP --figure grid` writes
        try {
            const auto method = m_method->currentText().toStdString();
            figures::writeProvenance(path.toStdString(),
                                     figures::sweepGridProvenance(
                                         m_model.dir().toStdString(), method, *m_model.aggregate(),
                                         figures::aggregateBand(*m_model.aggregate(), method)));
        } catch (const std::exception& e) {
            if (error)
                *error = QString::fromUtf8(e.what());
            return false;
        }
    }
    return result.ok;
}

}  // namespace lengen::ui
