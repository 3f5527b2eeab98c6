#pragma once
// Other runs' logged training curves drawn over the Train tab's loss plot (TensorBoard's run
// overlay): read once from each run file, redrawn with the view's smoothing and series choice,
// each in its run colour (plots::runColor). GUI thread only.

#include <QString>
#include <QVector>

#include <string>

namespace lengen::ui {

struct LoggedCurve {
    QString runFile;  ///< the run.h5 path
    QString name;     ///< legend entry: "<pe> seed <s> (<run id>)"
    std::string runId;
    QVector<double> steps, loss, excess;
};

/// Reads a run's training log (a run folder or run.h5). Throws engine::Error naming the file.
LoggedCurve readLoggedCurve(const QString& run);

/// EMA of `raw` with weight `alpha` on the past (0 = no smoothing); NaN rows keep the average.
QVector<double> emaSmoothed(const QVector<double>& raw, double alpha);

}  // namespace lengen::ui
