#include "training_columns.h"

#include <QCoreApplication>

namespace lengen::ui {

namespace {

QString tr(const char* text) { return QCoreApplication::translate("LoggedColumns", text); }

std::vector<double> values(const QVector<double>& v) { return {v.begin(), v.end()}; }

}  // namespace

QStringList loggedColumnNames()
{
    return {tr("curriculum (points, dims)"), tr("gradient norm"), tr("learning rate"),
            tr("steps/s"), tr("wall clock")};
}

QString loggedColumnId(LoggedColumn c)
{
    static const char* const ids[] = {"curriculum", "grad_norm", "learning_rate", "steps_per_sec",
                                      "wall_time"};
    return QString::fromLatin1(ids[int(c)]);
}

QString loggedColumnTip(LoggedColumn c)
{
    switch (c) {
    case LoggedColumn::Curriculum:
        return tr(
            "In-context points and input dims per prompt at each logged step (the curriculum)");
    case LoggedColumn::GradNorm:
        return tr("L2 norm of all gradients before clipping, at each logged step (/log/grad_norm): "
                  "spikes show instabilities; the dashed line is max_grad_norm");
    case LoggedColumn::LearningRate:
        return tr("The learning rate of each logged step's update (warm-up, then the schedule)");
    case LoggedColumn::StepsPerSecond:
        return tr("Training speed, a moving average of steps per second");
    case LoggedColumn::WallTime:
        return tr("Seconds since the run started (a resume continues the clock)");
    }
    return {};
}

void LoggedColumns::clear() { *this = LoggedColumns{}; }

void LoggedColumns::append(const engine::LogRecord& r)
{
    step << double(r.step);
    points << r.nPoints;
    dims << r.nDims;
    learningRate << r.learningRate;
    gradNorm << r.gradNorm;
    stepsPerSecond << r.stepsPerSecond;
    wallSeconds << r.wallSeconds;
}

void LoggedColumns::assign(const engine::TrainLog& log, double clip)
{
    clear();
    clipNorm = clip;
    for (size_t i = 0; i < log.step.size(); ++i) {
        step << double(log.step[i]);
        points << log.nPoints[i];
        dims << log.nDims[i];
        learningRate << log.learningRate[i];
        gradNorm << log.gradNorm[i];
        stepsPerSecond << log.stepsPerSecond[i];
        wallSeconds << log.wallSeconds[i];
    }
}

plots::FigureSpec loggedColumnFigure(const LoggedColumns& c, LoggedColumn which,
                                     const std::string& title)
{
    plots::FigureSpec f;
    f.x.label = "step";
    f.legend = plots::LegendPlace::LowerRight;
    auto series = [&](const char* name, const QVector<double>& y, const char* color) {
        plots::Series s;
        s.name = name;
        s.x = values(c.step);
        s.y = values(y);
        s.color = color;
        return s;
    };
    switch (which) {
    case LoggedColumn::Curriculum: {
        f.y.label = "curriculum";
        auto p = series("points", c.points, "#029E73"), d = series("dims", c.dims, "#CC78BC");
        p.staircase = d.staircase = true;
        f.series = {p, d};
        break;
    }
    case LoggedColumn::GradNorm:
        f.y.label = "gradient norm";
        f.y.log = true;
        f.legend = plots::LegendPlace::LowerRight;  // the norm sits above the threshold
        f.series = {series("before clipping", c.gradNorm, "#D55E00")};
        if (c.clipNorm > 0)
            f.hlines.push_back(
                {c.clipNorm, "clipped above " + QString::number(c.clipNorm, 'g', 4).toStdString(),
                 "#808080", true});
        break;
    case LoggedColumn::LearningRate:
        f.y.label = "learning rate";
        f.series = {series("learning rate", c.learningRate, "#0173B2")};
        break;
    case LoggedColumn::StepsPerSecond:
        f.y.label = "steps/s";
        f.series = {series("steps/s", c.stepsPerSecond, "#DE8F05")};
        break;
    case LoggedColumn::WallTime:
        f.y.label = "wall clock (s)";
        f.series = {series("wall clock", c.wallSeconds, "#56B4E9")};
        break;
    }
    f.title = title + " - " + f.y.label;
    return f;
}

}  // namespace lengen::ui
