#include "training_overlay.h"

#include <cmath>

#include "compare_logged.h"
#include "lengen/engine/run_file.h"
#include "run_figures.h"

namespace lengen::ui {

LoggedCurve readLoggedCurve(const QString& run)
{
    const auto path = engine::locateRunFile(run.toStdString());
    const auto info = engine::readRunInfo(path);
    const auto log = engine::readTrainLog(path);
    LoggedCurve c;
    c.runFile = QString::fromStdString(path);
    c.runId = info.runId;
    c.name = QString::fromStdString(figures::runLegend(info));
    for (size_t i = 0; i < log.step.size(); ++i) {
        c.steps << double(log.step[i]);
        c.loss << log.loss[i];
        c.excess << (i < log.excessLoss.size() ? log.excessLoss[i] : std::nan(""));
    }
    return c;
}

QVector<double> emaSmoothed(const QVector<double>& raw, double alpha)
{
    // One EMA for the Train tab and Compare's logged columns (compare_logged.h).
    const auto ema = emaOf(std::vector<double>(raw.begin(), raw.end()), alpha);
    return QVector<double>(ema.begin(), ema.end());
}

}  // namespace lengen::ui
