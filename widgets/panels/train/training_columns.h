#pragma once
// Every column a run logs, for the Train tab's second plot (what TensorBoard shows as a run's
// scalars): the curriculum's points and dims, the learning rate, the gradient norm before
// clipping, steps/s and the wall clock. Kept as plain vectors, filled from the run file or from
// the live LogRecords, and turned into one FigureSpec that is both drawn and exported. GUI
// thread only (no Qt widgets here: the figure is a value).

#include <QString>
#include <QStringList>
#include <QVector>

#include "figure_spec.h"
#include "lengen/engine/observer.h"
#include "lengen/engine/run_file.h"

namespace lengen::ui {

/// The logged columns one plot can show, in the order the chooser lists them.
enum class LoggedColumn { Curriculum, GradNorm, LearningRate, StepsPerSecond, WallTime };

/// The chooser's entries, one per LoggedColumn, and each one's tooltip.
QStringList loggedColumnNames();
/// Each entry's file-name stem: the /log column it draws ("curriculum" for points and dims).
QString loggedColumnId(LoggedColumn c);
QString loggedColumnTip(LoggedColumn c);

struct LoggedColumns {
    QVector<double> step, points, dims, learningRate, gradNorm, stepsPerSecond, wallSeconds;
    double clipNorm = 0;  ///< the run's max_grad_norm (<= 0: clipping off), drawn on GradNorm

    void clear();
    void append(const engine::LogRecord& r);
    /// Every row of a run's log; `clip` is its effective max_grad_norm.
    void assign(const engine::TrainLog& log, double clip);
    int rows() const { return int(step.size()); }
};

/// One column as a figure: its curve(s) by step (the curriculum as a staircase, points and
/// dims), the clipping threshold as a labelled line on the gradient norm (log y there). Rows
/// without a value (a gradient norm not measured) leave gaps. `title` heads the export.
plots::FigureSpec loggedColumnFigure(const LoggedColumns& columns, LoggedColumn which,
                                     const std::string& title);

}  // namespace lengen::ui
