#pragma once
// Compare's figure (issue 42): the model curve of one evaluation method from each selected
// run, or one curve per group of runs. Groups are formed by any set of settings: by default
// every resolved config key that differs between the runs except the seed, or keys the user
// names ("pe, model.num_hidden_layers"), or the older shortcuts (PE, task, backbone, sweep
// cell). Each group's curve is the mean over its runs with one band (engine::BandKind) and its
// legend says N and the band: "RoPE (N=3, mean ± SE)"; one run draws no band and says so.
// Runs that lack the method, and groups whose runs differ in more than the grouping keys, are
// named. GUI thread (it reads run files; the figure is a value).

#include <QStringList>

#include <optional>
#include <string>
#include <vector>

#include "compare_logged.h"
#include "figure_spec.h"
#include "lengen/engine/seed_stats.h"
#include "run_figures.h"

namespace lengen::ui {

enum class CompareGroup { EachRun, Settings, Keys, PositionEncoding, Task, Backbone, SweepAxes };

struct CompareOptions {
    CompareGroup group = CompareGroup::EachRun;
    /// CompareGroup::Keys: resolved config keys ("model.num_hidden_layers") or the aliases pe,
    /// task, backbone, seed.
    std::vector<std::string> keys;
    engine::BandKind band = engine::BandKind::Auto;
    int bootstrapTrials = 1000;
    /// A logged column only (an evaluation has neither): each run's EMA weight before runs are
    /// grouped (0 = raw; a group's band is then that of its smoothed runs), and the x axis.
    double smoothing = 0;
    LoggedX x = LoggedX::Step;
};

struct CompareResult {
    plots::FigureSpec figure;
    QStringList missing;  ///< runs with no stored evaluation of the method
    /// "RoPE: its 3 runs also differ in training.max_steps": groups that mix more than the
    /// grouping keys (the seed aside).
    QStringList notes;
    std::vector<std::string> keys;  ///< the keys the groups were formed by
    /// What it drew, recorded as the runs were read: per run with the method, its record and
    /// the one evaluation its curve comes from (the provenance serialises these).
    std::vector<figures::FigureSources> sources;
};

CompareResult compareRuns(const QStringList& runFiles, const std::string& method, bool baselines,
                          const CompareOptions& options);

/// The figure alone (tests and older callers): `group` with the default band.
plots::FigureSpec compareFigure(const QStringList& runFiles, const std::string& method,
                                bool baselines, QStringList* missing = nullptr,
                                CompareGroup group = CompareGroup::EachRun);

/// A grouping's stable name, as a provenance file records it: each-run, settings, keys, pe, task,
/// backbone, sweep-axes; and back (nullopt for a name it does not know).
const char* compareGroupName(CompareGroup group);
std::optional<CompareGroup> compareGroupFromName(const std::string& name);

/// "pe, model.n_layer" -> {"pe", "model.n_layer"}: how keys are typed.
std::vector<std::string> parseGroupKeys(const QString& text);

}  // namespace lengen::ui
