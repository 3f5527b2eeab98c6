#include "compare_model.h"

#include "figure_builder.h"

#include <QCoreApplication>

#include <algorithm>
#include <cmath>
#include <set>

#include "compare_differences.h"
#include "compare_logged.h"
#include "lengen/engine/analysis.h"
#include "lengen/engine/run_file.h"
#include "live_follow.h"
#include "run_figures.h"

namespace lengen::ui {

namespace {

// The texts keep the view's translation context: they are what the Compare tab says.
QString compareTr(const char* text, const char* disambiguation = nullptr, int n = -1)
{
    return QCoreApplication::translate("lengen::ui::CompareView", text, disambiguation, n);
}

}  // namespace

QString compareRunName(const QString& run)
{
    try {
        const auto info = engine::readRunInfo(engine::locateRunFile(run.toStdString()));
        return QString::fromStdString(figures::runLegend(info));
    } catch (const std::exception&) {
        return run;
    }
}

QString CompareModel::allMethodsText() { return compareTr("all methods, as panels"); }

QStringList CompareModel::loggedMethods() const
{
    QStringList out;
    for (const auto& m : loggedCompareMethods())
        out << QString::fromStdString(m);
    return out;
}

void CompareModel::setRuns(const QStringList& runs)
{
    m_runs = runs;
    std::set<std::string> methods;
    for (const auto& run : runs) {
        try {
            for (const auto& r : engine::readEvaluations(run.toStdString()))
                methods.insert(r.method);
        } catch (const std::exception&) {
            // unreadable or not evaluated: the figure's line names it
        }
    }
    m_methods.clear();
    for (const auto& m : methods)
        m_methods << QString::fromStdString(m);
    if (methods.size() > 1)
        m_methods << allMethodsText();
    // The chosen method stays while offered; else ood_length, the first one, or the training
    // loss when nothing is evaluated yet (issue 55).
    if (m_choices.method.isEmpty() || !setMethod(m_choices.method))
        m_choices.method = m_methods.contains(QStringLiteral("ood_length")) ? "ood_length"
                           : m_methods.isEmpty() ? QStringLiteral("training: loss")
                                                 : m_methods.front();
}

bool CompareModel::setMethod(const QString& method)
{
    if (!m_methods.contains(method) && !loggedMethods().contains(method))
        return false;
    m_choices.method = method;
    return true;
}

void CompareModel::setGrouping(CompareGroup group, const QString& keys, engine::BandKind band)
{
    m_choices.group = group;
    m_choices.keys = keys;
    m_choices.band = band;
}

void CompareModel::setView(bool logY, bool legendOutside)
{
    m_choices.logY = logY;
    m_choices.legendOutside = legendOutside;
}

void CompareModel::setSmoothing(double alpha)
{
    m_choices.smoothing = std::clamp(std::isfinite(alpha) ? alpha : 0.0, 0.0, 0.99);
}

void CompareModel::setChoices(const CompareChoices& choices)
{
    const QString method = m_choices.method;
    m_choices = choices;
    setSmoothing(choices.smoothing);
    // The view's method where the runs offer it; before any runs, kept for when they come (the
    // next setRuns takes it if offered, else the default).
    if (choices.method.isEmpty() || (!m_runs.isEmpty() && !setMethod(choices.method)))
        m_choices.method = method;
}

figures::ViewOptions CompareModel::view() const
{
    figures::ViewOptions v;
    v.logY = m_choices.logY.value_or(false);
    v.legendOutside = m_choices.legendOutside;
    return v;
}

void CompareModel::applyChoices(plots::FigureSpec& spec) const
{
    figures::applyView(spec, view());
    if (m_choices.logY == false)  // turned off: linear even where the figure is log by itself
        spec.y.log = false;
}

CompareOptions CompareModel::options() const
{
    CompareOptions o;
    o.group = m_choices.group;
    o.keys = parseGroupKeys(m_choices.keys);
    o.band = m_choices.band;
    o.smoothing = m_choices.smoothing;
    o.x = m_choices.x;
    return o;
}

bool CompareModel::followsLogs() const { return isLoggedMethod(m_choices.method.toStdString()); }

bool CompareModel::changedOnDisk() const
{
    return !m_runs.isEmpty() && runFilesStamp(m_runs, followsLogs()) != m_stamp;
}

const CompareShown& CompareModel::rebuild()
{
    // What the figure is made of now: a logged column follows run.h5 as it trains too.
    m_stamp = runFilesStamp(m_runs, followsLogs());
    m_shown = {};
    if (m_runs.isEmpty() || m_choices.method.isEmpty()) {
        plots::setRunsDrawn("compare", {});  // nothing drawn: no swatch says it is
        m_shown.missing = m_runs;
        m_shown.offerEvaluate = !m_runs.isEmpty();
        m_shown.info = m_runs.isEmpty()
                           ? compareTr("Select runs in the browser and press “Compare selected”.")
                           : compareTr("None of the selected runs is evaluated yet.");
        return m_shown;
    }
    if (m_choices.method == allMethodsText())
        rebuildPanels();
    else
        rebuildOne();
    return m_shown;
}

void CompareModel::rebuildOne()
{
    const QString method = m_choices.method;
    try {
        auto result = compareRuns(m_runs, method.toStdString(), m_choices.baselines, options());
        m_shown.spec = std::move(result.figure);
        applyChoices(m_shown.spec);
        m_shown.sources = std::move(result.sources);
        m_shown.groupedBy = result.keys;
        m_shown.missing = result.missing;
        const auto shown = m_runs.size() - m_shown.missing.size();
        QString text = m_runs.size() == 1
                           ? compareTr("1 run")
                           : compareTr("%1 of %2 runs compared").arg(shown).arg(m_runs.size());
        if (!m_shown.missing.isEmpty()) {
            QStringList names;
            for (const auto& r : m_shown.missing)
                names << compareRunName(r);
            // Said, not silently dropped: which runs have no curve here, and why; a long list
            // goes to the tooltip, so the line stays one line above the figure.
            m_shown.infoTip = compareTr("Not evaluated with %1:\n%2").arg(method, names.join('\n'));
            text += names.size() <= 2
                        ? compareTr("; left out, not evaluated with %1: %2")
                              .arg(method, names.join(", "))
                        : compareTr("; %1 runs left out, not evaluated with %2 (hover for which)")
                              .arg(names.size())
                              .arg(method);
        }
        if (!result.keys.empty()) {
            QStringList keys;
            for (const auto& k : result.keys)
                keys << QString::fromStdString(k);
            text += compareTr("; grouped by %1").arg(keys.join(", "));
        }
        for (const auto& note : result.notes)  // groups that mix more than the grouping keys
            text += QStringLiteral("; ") + note;
        m_shown.info = text;
    } catch (const std::exception& e) {
        m_shown.info = QString::fromUtf8(e.what());
    }
    // A run without a log of the column is not made by evaluating it.
    m_shown.offerEvaluate = !m_shown.missing.isEmpty() && !followsLogs();
}

// Every method the runs hold, a panel each (TensorBoard's "several charts at once"): the same
// curves, grouping and baselines as one method, one legend for all panels. A run without one
// method's evaluation is left out of that panel and named in the line above.
void CompareModel::rebuildPanels()
{
    plots::GridSpec grid;
    QStringList leftOut, notes;
    try {
        for (const auto& method : m_methods) {
            if (method == allMethodsText())
                continue;  // the evaluation methods only: a log has no in-context axis
            auto result = compareRuns(m_runs, method.toStdString(), m_choices.baselines, options());
            auto panel = std::move(result.figure);
            applyChoices(panel);
            if (grid.title.empty())  // "<task> - <method>": the task heads the grid
                grid.title = panel.title.substr(0, panel.title.find(" - "));
            panel.title = method.toStdString();
            grid.panels.push_back(std::move(panel));
            for (const auto& r : result.missing)
                leftOut << compareTr("%1 from %2").arg(compareRunName(r), method);
            for (const auto& note : result.notes)  // "RoPE: its 3 runs also differ in …"
                if (!notes.contains(note))
                    notes << note;
        }
    } catch (const std::exception& e) {
        m_shown.info = QString::fromUtf8(e.what());
        return;
    }
    grid.columns = std::min<int>(3, int(grid.panels.size()));
    grid.widthInches = 5.0 * grid.columns;
    grid.heightInches = 4.5 * ((int(grid.panels.size()) + grid.columns - 1) / grid.columns);
    // One line above the panels (a list of every run and method squeezed the figure): the
    // count here, which ones in the tooltip.
    m_shown.info =
        compareTr("%n method(s) side by side", nullptr, int(grid.panels.size())) +
        (leftOut.isEmpty() ? QString()
                           : compareTr("; %n curve(s) left out, not evaluated (hover for which)",
                                       nullptr, int(leftOut.size())));
    // Groups that mix more than the grouping keys, as one method's line says (issue 70, defect
    // 12: the panels left the note out).
    for (const auto& note : notes)
        m_shown.info += QStringLiteral("; ") + note;
    m_shown.infoTip = leftOut.isEmpty()
                          ? QString()
                          : compareTr("Left out, not evaluated:\n%1").arg(leftOut.join('\n'));
    m_shown.panels = std::move(grid);
}

CompareTable CompareModel::table() const
{
    std::vector<figures::ComparedRun> runs;
    const std::string method = m_choices.method.toStdString();
    CompareTable t;
    for (const auto& run : m_runs) {
        try {
            const auto info = engine::readRunInfo(engine::locateRunFile(run.toStdString()));
            figures::ComparedRun r{
                engine::storedRunConfig(info.configYaml, info.path), info.reached, {}};
            try {  // an analysis file being written or damaged: the run's column stays, unevaluated
                for (auto& e : engine::readEvaluations(run.toStdString()))
                    if (e.method == method && e.source == "lengen" && e.intervention.empty())
                        r.evaluated = std::move(e);
            } catch (const std::exception&) {
            }
            runs.push_back(std::move(r));
            t.runNames << QString::fromStdString(figures::runLegend(info));
        } catch (const std::exception&) {
            // An unreadable run has no config to compare; the figure's line says why.
        }
    }
    t.rows = figures::compareDifferences(runs, method);
    t.title = runs.size() < 2  ? QString()
              : t.rows.empty() ? compareTr("The compared runs' configs are the same.")
                               : compareTr("Config keys that differ between the compared runs "
                                           "(%n):",
                                           nullptr, int(t.rows.size()));
    return t;
}

}  // namespace lengen::ui
