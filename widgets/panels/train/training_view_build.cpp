// TrainingView's construction: its widgets, their layout and what they are wired to (the
// rest of the view, following the live run and drawing it, is training_view.cpp).

#include "training_view.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSlider>
#include <QSplitter>
#include <QVBoxLayout>

#include "curve_interactions.h"
#include "export_dialog.h"
#include "figure_builder.h"
#include "layout_check.h"
#include "lengen/engine/jobs.h"
#include "lengen/engine/run_control.h"
#include "qcp.h"
#include "run_table_model.h"

namespace lengen::ui {

namespace {

void stylePlot(QCustomPlot* p, const QString& x, const QString& y)
{
    plots::FigureSpec empty;
    empty.x.label = x.toStdString();
    empty.y.label = y.toStdString();
    empty.legend = plots::LegendPlace::UpperRight;
    plots::buildFigure(*p, empty);
    p->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
}

}  // namespace

TrainingView::TrainingView(RunController& controller, QWidget* parent)
    : QWidget(parent), m_controller(controller)
{
    createControls();
    createPlots();
    layOut();
    wireControls();
    wireController();
    onState(m_controller.state());
}

// The labels, the job's buttons and the plot options.
void TrainingView::createControls()
{
    m_label = new QLabel(tr("Nothing is training. Set up a run and press Train."));
    // A long run path must not widen the window: the label takes what the row gives it.
    m_label->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_label->setMinimumWidth(1);
    // A header longer than the row wraps instead of being cut ("final loss 1.3 (40 log", found
    // in the Xvfb walk at 1280 px).
    m_label->setWordWrap(true);
    m_progress = new QProgressBar;
    m_progress->setRange(0, 1);
    m_rate = new QLabel;
    m_queue = new QLabel;
    m_pause = new QPushButton(tr("Pause"));
    m_stop = new QPushButton(tr("Stop"));
    m_resume = new QPushButton(tr("Resume training"));
    m_resume->setToolTip(tr("Continue this stopped run from its last checkpoint (as `lengen train "
                            "--resume`)"));
    m_resume->setVisible(false);
    m_openLive = new QPushButton;
    m_openLive->setVisible(false);
    m_openLive->setToolTip(
        tr("Pause and Stop here act on the open run only: open the run that trains"));
    m_stop->setToolTip(tr("Stop after the current step; a checkpoint is written and the run can "
                          "be resumed"));
    m_smoothing = new QSlider(Qt::Horizontal);
    m_smoothing->setRange(0, 99);
    m_smoothing->setValue(90);
    m_smoothing->setToolTip(tr("EMA smoothing of the loss curve"));
    m_logScale = new QCheckBox(tr("log scale"));
    m_logScale->setChecked(true);
    m_series = new QComboBox;
    m_series->setObjectName("lossSeries");
    m_series->addItem(tr("loss"));
    m_series->addItem(tr("excess loss (÷ least squares)"));
    m_series->setToolTip(
        tr("Excess loss: the loss divided by the least-squares estimator's expected "
           "loss at the current curriculum size (1 = as good as least squares)"));
    m_clearOverlays = new QPushButton(tr("Clear overlay"));
    m_clearOverlays->setToolTip(tr("Remove the other runs' curves from the loss plot"));
    m_clearOverlays->setVisible(false);
    m_column = new QComboBox;
    m_column->setObjectName("loggedColumn");
    m_column->addItems(loggedColumnNames());
    for (int i = 0; i < m_column->count(); ++i)
        m_column->setItemData(i, loggedColumnTip(LoggedColumn(i)), Qt::ToolTipRole);
    m_column->setToolTip(tr("The logged column plotted beside the loss"));
    m_columnExport = new QPushButton(tr("Export…"));
    m_columnExport->setToolTip(tr("Save this plot as drawn: PNG, SVG, PDF or CSV"));
    m_hover = new QLabel;
    m_hover->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);  // never widens the tab
    m_hover->setWordWrap(true);
    m_export = new QPushButton(tr("Export…"));
    m_export->setToolTip(
        tr("Save the loss plot as drawn (raw and smoothed): PNG, SVG, PDF or CSV"));
}

// The loss (raw and EMA, log scale), the pointwise metric and a logged column (redrawColumn).
void TrainingView::createPlots()
{
    m_loss = new QCustomPlot;
    m_loss->setObjectName(QStringLiteral("lossPlot"));
    m_pointwise = new QCustomPlot;
    m_pointwise->setObjectName(QStringLiteral("pointwisePlot"));
    m_side = new QCustomPlot;
    stylePlot(m_loss, tr("step"), tr("loss"));
    // A short y label: the long one was clipped at 1280 × 800 (issue 52); the tooltip says it all.
    stylePlot(m_pointwise, tr("in-context examples"), tr("last %1 logs").arg(TrainModel::kRecent));
    m_pointwise->setToolTip(
        tr("The metric (squared error or accuracy) by in-context examples, the mean of the "
           "last %1 logged rows at the length the run reached")
            .arg(TrainModel::kRecent));
    for (int i = 0; i < 2; ++i)
        m_loss->addGraph();
    m_loss->graph(0)->setPen(QPen(QColor(1, 115, 178, 90), 1));
    m_loss->graph(0)->setName(tr("loss"));
    m_loss->graph(1)->setPen(QPen(QColor("#0173B2"), 2));
    m_loss->graph(1)->setName(tr("EMA"));
    // Listed once a run is drawn (redraw): an empty plot showed "loss, EMA" beside no curve.
    m_loss->graph(0)->removeFromLegend();
    m_loss->graph(1)->removeFromLegend();
    m_loss->legend->setVisible(false);
    m_loss->yAxis->setScaleType(QCPAxis::stLogarithmic);
    m_loss->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    m_pointwise->addGraph()->setPen(QPen(QColor("#DE8F05"), 2));
}

void TrainingView::layOut()
{
    auto* controls = new QHBoxLayout;
    controls->addWidget(m_progress, 1);
    controls->addWidget(m_rate);
    controls->addWidget(m_pause);
    controls->addWidget(m_stop);
    controls->addWidget(m_resume);
    controls->addWidget(m_openLive);
    auto* smoothing = new QHBoxLayout;
    smoothing->addWidget(m_series);
    smoothing->addWidget(new QLabel(tr("Smoothing")));
    smoothing->addWidget(m_smoothing, 1);
    smoothing->addWidget(m_logScale);
    smoothing->addWidget(m_export);
    smoothing->addWidget(m_clearOverlays);
    smoothing->addStretch();
    smoothing->addWidget(m_queue);
    auto* columnBar = new QHBoxLayout;
    columnBar->addWidget(new QLabel(tr("Beside:")));
    columnBar->addWidget(m_column, 1);
    columnBar->addWidget(m_columnExport);
    // The two plots on the right share their height through a splitter (the user decides
    // which one gets it); the chooser sits on the logged column's plot.
    auto* columnBox = new QWidget;
    auto* columnLayout = new QVBoxLayout(columnBox);
    columnLayout->setContentsMargins(0, 0, 0, 0);
    columnLayout->addLayout(columnBar);
    columnLayout->addWidget(m_side, 1);
    // Each keeps a readable panel (issue 80, defect 11: 75 px tall at 1280 x 800): the column
    // scrolls when the window is too short for both.
    auto* side = new QWidget;
    auto* sideLayout = new QVBoxLayout(side);
    sideLayout->setContentsMargins(0, 0, 0, 0);
    sideLayout->addWidget(m_pointwise, 1);
    sideLayout->addWidget(columnBox, 1);
    m_pointwise->setMinimumHeight(plots::kPlotMinHeight);
    m_side->setMinimumHeight(plots::kPlotMinHeight);
    m_loss->setMinimumHeight(plots::kPlotMinHeight);
    auto* sideScroll = new QScrollArea;
    sideScroll->setObjectName(QStringLiteral("trainSideScroll"));
    sideScroll->setWidgetResizable(true);
    sideScroll->setFrameShape(QFrame::NoFrame);
    sideScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    sideScroll->setWidget(side);
    auto* plots = new QHBoxLayout;
    plots->addWidget(m_loss, 3);
    plots->addWidget(sideScroll, 2);
    // The hover read-out beside the run's line: a row of its own cost the plots the height
    // they need at 1280 x 800.
    // The header takes four fifths: at 3 : 2 it wrapped "(60 log rows)" onto a second line
    // with 300 px free beside it (the Xvfb pass, N7); the read-out wraps in its fifth.
    auto* top = new QHBoxLayout;
    top->addWidget(m_label, 4);
    top->addWidget(m_hover, 1);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addLayout(controls);
    layout->addLayout(smoothing);
    layout->addLayout(plots, 1);
}

// The buttons act on the training of the open run, and the plot options redraw.
void TrainingView::wireControls()
{
    plots::enableCurveInteractions(*m_loss,
                                   [this](const QString& text) { m_hover->setText(text); });
    connect(m_clearOverlays, &QPushButton::clicked, this, [this] { setOverlays({}); });

    // The buttons act on the training of the open run, and on nothing else (issue 39: Pause once
    // paused a hidden training while another run was open).
    connect(m_pause, &QPushButton::clicked, this, [this] {
        const auto j = m_controller.job(m_model.liveJob());
        if (!j || !m_model.showingLive())
            return;
        j->state == JobState::Paused ? m_controller.resume(m_model.liveJob())
                                     : m_controller.pause(m_model.liveJob());
    });
    connect(m_stop, &QPushButton::clicked, this, [this] {
        if (m_model.showingLive()) {
            m_controller.stop(m_model.liveJob());
            return;
        }
        if (const QString by = trainedElsewhereBy(); !by.isEmpty()) {
            try {
                engine::requestStop(m_model.runFile().toStdString(),
                                    "lengen-studio " + engine::thisHolder());
                m_rate->setText(tr("asked %1 to stop (as `lengen stop`)").arg(by));
            } catch (const std::exception& e) {
                m_rate->setText(QString::fromUtf8(e.what()));
            }
        }
    });
    connect(m_openLive, &QPushButton::clicked, this, [this] {
        if (!m_model.liveRunFile().isEmpty())
            Q_EMIT openRunRequested(m_model.liveRunFile());
    });
    connect(&m_controller, &RunController::jobChanged, this, [this](const JobInfo& j) {
        if (j.id == m_model.liveJob())
            updateControls();
    });
    connect(m_resume, &QPushButton::clicked, this, [this] {
        m_resume->setVisible(false);
        Q_EMIT resumeRequested(m_model.runFile());
    });
    connect(m_smoothing, &QSlider::valueChanged, this, &TrainingView::redrawSmoothed);
    connect(m_series, &QComboBox::currentIndexChanged, this, &TrainingView::redrawSmoothed);
    connect(m_export, &QPushButton::clicked, this, &TrainingView::exportWithDialog);
    connect(m_column, &QComboBox::currentIndexChanged, this, &TrainingView::redrawColumn);
    plots::enableCurveInteractions(*m_side,
                                   [this](const QString& text) { m_hover->setText(text); });
    connect(m_columnExport, &QPushButton::clicked, this, [this] {
        if (m_model.columns().rows() == 0)
            return;
        const auto name = loggedColumnId(LoggedColumn(m_column->currentIndex())) + ".png";
        askExportTarget(this, tr("Export %1 plot").arg(m_column->currentText()), name,
                        [this](const ExportChoice& target) {
                            QString error;
                            reportExport(this, exportColumn(target.path, target.dpi, &error),
                                         error);
                        });
    });
    connect(m_logScale, &QCheckBox::toggled, this, [this](bool on) {
        m_loss->yAxis->setScaleType(on ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
        m_loss->yAxis->setTicker(on ? QSharedPointer<QCPAxisTicker>(new QCPAxisTickerLog)
                                    : QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
        m_loss->rescaleAxes();
        m_loss->replot(QCustomPlot::rpQueuedReplot);
    });
}

// What the controller reports about the live training.
void TrainingView::wireController()
{
    connect(&m_controller, &RunController::stateChanged, this, &TrainingView::onState);
    connect(&m_controller, &RunController::runStarted, this, &TrainingView::onStarted);
    connect(&m_controller, &RunController::stepProgress, this, &TrainingView::onProgress);
    connect(&m_controller, &RunController::logRecord, this, &TrainingView::onLog);
    connect(&m_controller, &RunController::queueChanged, this, [this](int n) {
        setElided(m_queue,
                  n > 0
                      ? tr("%n queued: %1", nullptr, n).arg(m_controller.queuedLabels().join(", "))
                      : QString());
    });
    // Evaluations and probes have their own progress area: this view shows trainings only (one
    // runs at a time; one that failed before it started was never the live one).
    auto live = [](const JobInfo& j) { return j.kind == JobKind::Training; };
    // The live run ends: its label says how, when it is the one shown (the open run's
    // re-read that follows keeps it), and the job's controls go.
    const auto ended = [this](const QString& text) {
        if (m_model.showingLive()) {
            m_rate->clear();  // no rate or ETA for a run that is not going
            m_label->setText(text);
        }
        m_model.endLive();
        updateControls();
    };
    connect(&m_controller, &RunController::runFinished, this, [=](const JobInfo& j) {
        if (!live(j))
            return;
        ended(tr("%1 finished: %2 steps, final loss %3")
                  .arg(QString::fromStdString(j.label))
                  .arg(j.result.done)
                  .arg(j.result.finalLoss, 0, 'g', 4));
        m_label->setToolTip(finalLossDefinition());
    });
    connect(&m_controller, &RunController::runCancelled, this, [=](const JobInfo& j) {
        if (live(j))
            ended(tr("%1 stopped after %2 steps (checkpoint written; Resume continues it)")
                      .arg(QString::fromStdString(j.label))
                      .arg(j.result.done));
    });
    connect(&m_controller, &RunController::runFailed, this,
            [=](const JobInfo& j, const RunError& e) {
                if (live(j))
                    ended(tr("%1 failed: %2").arg(QString::fromStdString(j.label), e.message));
            });
}

}  // namespace lengen::ui
