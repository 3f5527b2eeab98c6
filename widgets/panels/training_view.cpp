#include "training_view.h"

#include <QCheckBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSlider>
#include <QVBoxLayout>

#include <cmath>

#include "figure_builder.h"
#include "qcp.h"
#include "lengen/engine/run_file.h"

namespace lengen::ui {

namespace {

QString duration(double seconds)
{
    const int s = int(seconds + 0.5);
    return s >= 3600 ? QStringLiteral("%1:%2:%3").arg(s / 3600).arg(s / 60 % 60, 2, 10, QChar('0')).arg(s % 60, 2, 10, QChar('0'))
                     : QStringLiteral("%1:%2").arg(s / 60).arg(s % 60, 2, 10, QChar('0'));
}

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
    m_label = new QLabel(tr("Nothing is training. Set up a run and press Train."));
    m_progress = new QProgressBar;
    m_progress->setRange(0, 1);
    m_rate = new QLabel;
    m_queue = new QLabel;
    m_pause = new QPushButton(tr("Pause"));
    m_stop = new QPushButton(tr("Stop"));
    m_stop->setToolTip(tr("Stop after the current step; a checkpoint is written and the run can "
                          "be resumed"));
    m_smoothing = new QSlider(Qt::Horizontal);
    m_smoothing->setRange(0, 99);
    m_smoothing->setValue(90);
    m_smoothing->setToolTip(tr("EMA smoothing of the loss curve"));
    m_logScale = new QCheckBox(tr("log scale"));
    m_logScale->setChecked(true);
    m_loss = new QCustomPlot;
    m_pointwise = new QCustomPlot;
    m_curriculum = new QCustomPlot;
    stylePlot(m_curriculum, tr("step"), tr("curriculum"));
    m_curriculum->addGraph()->setPen(QPen(QColor("#029E73"), 2));
    m_curriculum->graph(0)->setName(tr("points"));
    m_curriculum->graph(0)->setLineStyle(QCPGraph::lsStepLeft);
    m_curriculum->addGraph()->setPen(QPen(QColor("#CC78BC"), 2));
    m_curriculum->graph(1)->setName(tr("dims"));
    m_curriculum->graph(1)->setLineStyle(QCPGraph::lsStepLeft);
    m_curriculum->legend->setVisible(true);
    m_curriculum->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignBottom | Qt::AlignRight);
    stylePlot(m_loss, tr("step"), tr("loss"));
    stylePlot(m_pointwise, tr("in-context examples"), tr("metric (latest log)"));
    for (int i = 0; i < 2; ++i)
        m_loss->addGraph();
    m_loss->graph(0)->setPen(QPen(QColor(1, 115, 178, 90), 1));
    m_loss->graph(0)->setName(tr("loss"));
    m_loss->graph(1)->setPen(QPen(QColor("#0173B2"), 2));
    m_loss->graph(1)->setName(tr("EMA"));
    m_loss->legend->setVisible(true);
    m_loss->yAxis->setScaleType(QCPAxis::stLogarithmic);
    m_loss->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    m_pointwise->addGraph()->setPen(QPen(QColor("#DE8F05"), 2));

    auto* controls = new QHBoxLayout;
    controls->addWidget(m_progress, 1);
    controls->addWidget(m_rate);
    controls->addWidget(m_pause);
    controls->addWidget(m_stop);
    auto* smoothing = new QHBoxLayout;
    smoothing->addWidget(new QLabel(tr("Smoothing")));
    smoothing->addWidget(m_smoothing, 1);
    smoothing->addWidget(m_logScale);
    smoothing->addStretch();
    smoothing->addWidget(m_queue);
    auto* side = new QVBoxLayout;
    side->addWidget(m_pointwise, 3);
    side->addWidget(m_curriculum, 2);
    auto* plots = new QHBoxLayout;
    plots->addWidget(m_loss, 3);
    plots->addLayout(side, 2);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_label);
    layout->addLayout(controls);
    layout->addLayout(smoothing);
    layout->addLayout(plots, 1);

    connect(m_pause, &QPushButton::clicked, this, [this] {
        m_controller.state() == RunController::State::Paused ? m_controller.resume() : m_controller.pause();
    });
    connect(m_stop, &QPushButton::clicked, &m_controller, &RunController::stop);
    connect(m_smoothing, &QSlider::valueChanged, this, &TrainingView::redrawSmoothed);
    connect(m_logScale, &QCheckBox::toggled, this, [this](bool on) {
        m_loss->yAxis->setScaleType(on ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
        m_loss->yAxis->setTicker(on ? QSharedPointer<QCPAxisTicker>(new QCPAxisTickerLog)
                                    : QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
        m_loss->rescaleAxes();
        m_loss->replot(QCustomPlot::rpQueuedReplot);
    });
    connect(&m_controller, &RunController::stateChanged, this, &TrainingView::onState);
    connect(&m_controller, &RunController::runStarted, this, &TrainingView::onStarted);
    connect(&m_controller, &RunController::stepProgress, this, &TrainingView::onProgress);
    connect(&m_controller, &RunController::logRecord, this, &TrainingView::onLog);
    connect(&m_controller, &RunController::queueChanged, this, [this](int n) {
        m_queue->setText(n > 0 ? tr("%n queued: %1", nullptr, n).arg(m_controller.queuedLabels().join(", "))
                               : QString());
    });
    connect(&m_controller, &RunController::runFinished, this, [this](const QString& l, const engine::RunSummary& s) {
        m_label->setText(tr("%1 finished: %2 steps, final loss %3").arg(l).arg(s.stepsDone).arg(s.finalLoss, 0, 'g', 4));
    });
    connect(&m_controller, &RunController::runCancelled, this, [this](const QString& l, const engine::RunSummary& s) {
        m_label->setText(tr("%1 stopped after %2 steps (checkpoint written)").arg(l).arg(s.stepsDone));
    });
    connect(&m_controller, &RunController::runFailed, this, [this](const QString& l, const RunError& e) {
        m_label->setText(tr("%1 failed: %2").arg(l, e.message));
    });
    onState(m_controller.state());
}

int TrainingView::loggedPoints() const { return int(m_steps.size()); }

void TrainingView::onState(RunController::State s)
{
    using S = RunController::State;
    m_pause->setEnabled(s == S::Running || s == S::Paused);
    m_pause->setText(s == S::Paused ? tr("Resume") : tr("Pause"));
    m_stop->setEnabled(s == S::Running || s == S::Paused);
    if (s == S::Stopping)
        m_rate->setText(tr("stopping…"));
}

void TrainingView::onStarted(const QString& label, const engine::RunStarted& info)
{
    m_steps.clear();
    m_values.clear();
    m_loss->graph(0)->data()->clear();
    for (int g = 0; g < 2; ++g)
        m_curriculum->graph(g)->data()->clear();
    redrawSmoothed();
    m_progress->setRange(0, int(std::max<std::int64_t>(1, info.totalSteps)));
    m_progress->setValue(int(info.firstStep));
    m_label->setText(info.runFile.empty()
                         ? label
                         : tr("%1 — %2 (seed %3, %4, %5 parameters)")
                               .arg(label, QString::fromStdString(info.runFile))
                               .arg(info.seed)
                               .arg(QString::fromStdString(info.device))
                               .arg(info.parameterCount));
}

void TrainingView::onProgress(const engine::StepProgress& p)
{
    m_progress->setMaximum(int(std::max<std::int64_t>(1, p.totalSteps)));
    m_progress->setValue(int(p.step + 1));
    m_rate->setText(p.stepsPerSecond > 0 ? tr("%1 steps/s, ETA %2").arg(p.stepsPerSecond, 0, 'f', 1).arg(duration(p.etaSeconds))
                                         : QString());
}

void TrainingView::onLog(const engine::LogRecord& r)
{
    appendLoss(double(r.step), r.loss);
    m_curriculum->graph(0)->addData(double(r.step), r.nPoints);
    m_curriculum->graph(1)->addData(double(r.step), r.nDims);
    m_curriculum->rescaleAxes();
    m_curriculum->replot(QCustomPlot::rpQueuedReplot);
    QVector<double> k, v;
    for (size_t i = 0; i < r.pointwise.size(); ++i)
        if (std::isfinite(r.pointwise[i])) {
            k << double(i);
            v << r.pointwise[i];
        }
    m_pointwise->graph(0)->setData(k, v, true);
    m_pointwise->rescaleAxes();
    m_pointwise->replot(QCustomPlot::rpQueuedReplot);
}

void TrainingView::appendLoss(double step, double loss)
{
    m_steps << step;
    m_values << loss;
    m_loss->graph(0)->addData(step, loss);
    redrawSmoothed();
}

void TrainingView::redrawSmoothed()
{
    const double alpha = m_smoothing->value() / 100.0;
    QVector<double> ema(m_values.size());
    double acc = 0;
    for (int i = 0; i < m_values.size(); ++i) {
        acc = i == 0 ? m_values[i] : alpha * acc + (1 - alpha) * m_values[i];
        ema[i] = acc;
    }
    m_loss->graph(1)->setData(m_steps, ema, true);
    if (m_values.isEmpty())
        m_loss->graph(0)->data()->clear();
    m_loss->rescaleAxes();
    m_loss->replot(QCustomPlot::rpQueuedReplot);
}

void TrainingView::showRunLog(const QString& runFile)
{
    if (m_controller.state() != RunController::State::Idle)
        return;  // the live run owns the plots
    m_steps.clear();
    m_values.clear();
    m_loss->graph(0)->data()->clear();
    for (int g = 0; g < 2; ++g)
        m_curriculum->graph(g)->data()->clear();
    try {
        const auto log = engine::readTrainLog(runFile.toStdString());
        for (size_t i = 0; i < log.step.size(); ++i) {
            m_steps << double(log.step[i]);
            m_values << log.loss[i];
            m_loss->graph(0)->addData(double(log.step[i]), log.loss[i]);
            m_curriculum->graph(0)->addData(double(log.step[i]), log.nPoints[i]);
            m_curriculum->graph(1)->addData(double(log.step[i]), log.nDims[i]);
        }
        m_curriculum->rescaleAxes();
        m_curriculum->replot(QCustomPlot::rpQueuedReplot);
        if (!log.step.empty() && log.pointwiseWidth > 0) {  // the last row's metric per position
            QVector<double> k, v;
            const size_t w = size_t(log.pointwiseWidth), last = log.pointwise.size() - w;
            for (size_t i = 0; i < w; ++i)
                if (std::isfinite(log.pointwise[last + i])) {
                    k << double(i);
                    v << log.pointwise[last + i];
                }
            m_pointwise->graph(0)->setData(k, v, true);
            m_pointwise->rescaleAxes();
            m_pointwise->replot(QCustomPlot::rpQueuedReplot);
        }
        m_label->setText(tr("Log of %1 (%2 rows)").arg(runFile).arg(log.step.size()));
    } catch (const std::exception& e) {
        m_label->setText(QString::fromUtf8(e.what()));
    }
    redrawSmoothed();
}

}  // namespace lengen::ui
