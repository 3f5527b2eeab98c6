// The curriculum over steps (reference §5.5) and what a run's max_steps leaves of it. The
// training length of a run is what its last step trained on, which a max_steps that ends before
// the curriculum does makes shorter than points.end (issue 52): every figure's "train length"
// marker, `lengen info` and the Runs list read it from here or from what the run recorded.

#include <algorithm>
#include <string>

#include "lengen/engine/config.h"
#include "lengen/engine/run_file.h"

namespace lengen::engine {

namespace {

// The first 0-based step at which `axis` holds its end value, or -1 if it never gets there
// (increment 0 below the end).
std::int64_t stepReachingEnd(const CurriculumAxis& axis)
{
    if (axis.start >= axis.end)
        return 0;
    if (axis.increment <= 0)
        return -1;
    const std::int64_t increments =
        (std::int64_t(axis.end) - axis.start + axis.increment - 1) / axis.increment;
    return increments * axis.interval;
}

std::string plural(int n, const char* one, const char* many)
{
    return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

int CurriculumAxis::valueAt(std::int64_t step) const
{
    const std::int64_t v =
        start + static_cast<std::int64_t>(increment) * (std::max<std::int64_t>(step, 0) / interval);
    return static_cast<int>(std::min<std::int64_t>(v, end));
}

CurriculumState RunConfig::curriculumAt(std::int64_t step) const
{
    return {task.curriculum.dims.valueAt(step), task.curriculum.points.valueAt(step)};
}

CurriculumState RunConfig::curriculumAfter(std::int64_t stepsDone) const
{
    return curriculumAt(std::max<std::int64_t>(stepsDone, 1) - 1);
}

std::string curriculumShortfall(const RunConfig& c)
{
    const std::int64_t steps = c.training.maxSteps;
    if (steps <= 0)
        return "";
    const auto last = c.curriculumAfter(steps);
    const auto& cur = c.task.curriculum;
    // Boolean tasks ignore the dimension curriculum (reference §2): only their points count.
    const bool dimsShort = last.dims < cur.dims.end && !c.isBooleanTask();
    const bool pointsShort = last.points < cur.points.end;
    if (!dimsShort && !pointsShort)
        return "";
    std::string reaches, ends;
    const auto add = [&](const CurriculumAxis& axis, int at, const char* one, const char* many) {
        const auto s = stepReachingEnd(axis);
        reaches += (reaches.empty() ? "" : ", ") + plural(axis.end, one, many) +
                   (s < 0 ? std::string(" never (increment 0)") : " at step " + std::to_string(s));
        ends += (ends.empty() ? "" : " and ") + plural(at, one, many);
    };
    if (pointsShort)
        add(cur.points, last.points, "point", "points");
    if (dimsShort)
        add(cur.dims, last.dims, "dim", "dims");
    return "the curriculum reaches " + reaches + "; with " + std::to_string(steps) +
           " steps training ends at " + ends + " (figures mark that as the training length)";
}

std::string reachedText(const ReachedCurriculum& r, const RunConfig& c)
{
    const auto& cur = c.task.curriculum;
    const auto both = [](int points, int dims) {
        return plural(points, "point", "points") + ", " + plural(dims, "dim", "dims");
    };
    if (r.points <= 0)
        return "nothing yet (the curriculum starts at " + both(cur.points.start, cur.dims.start) +
               ")";
    const std::string reached = both(r.points, r.dims);
    const bool dimsMatter = !c.isBooleanTask();
    if (r.points >= cur.points.end && (!dimsMatter || r.dims >= cur.dims.end))
        return reached + " (the curriculum's end)";
    const std::string end = both(cur.points.end, cur.dims.end);
    const auto last = c.curriculumAfter(c.training.maxSteps);
    if (last.points == r.points && (!dimsMatter || last.dims == r.dims)) {
        const auto sp = stepReachingEnd(cur.points),
                   sd = dimsMatter ? stepReachingEnd(cur.dims) : 0;
        const auto s = sp < 0 || sd < 0 ? -1 : std::max(sp, sd);
        return reached + ": max_steps (" + std::to_string(c.training.maxSteps) +
               ") ends before the curriculum's " + end +
               (s < 0 ? std::string(", which it never reaches")
                      : " (step " + std::to_string(s) + ")");
    }
    return reached + " after " + std::to_string(r.stepsDone) +
           " steps (the curriculum goes on to " + end + ")";
}

}  // namespace lengen::engine
