#pragma once
// Saved views (issue 72): what the studio shows over a folder of runs, under a name — the Runs
// filter and columns, Compare's method, grouping and controls, the Hyperparameters axes, colour
// and brushes. The studio keeps them in its settings and, to share them, in
// <folder>/lengen-views.json beside the runs: a colleague who opens the folder gets them, and
// `lengen runs --view NAME` takes a view's filter and columns from there. This file owns the
// format (docs/views-format.md); the studio turns the values into its models' choices.

#include <optional>
#include <string>
#include <vector>

#include "lengen/engine/run_table.h"

namespace lengen::engine {

/// Compare's choices as a view keeps them (names as its provenance records them).
struct SavedCompare {
    std::string method;              ///< "" = Compare's default for the runs
    std::string group = "settings";  ///< each-run, settings, keys, pe, task, backbone, sweep-axes
    std::string keys;                ///< the keys typed for "keys" ("pe, model.num_hidden_layers")
    std::string band = "auto";       ///< auto, bootstrap, sd, se, minmax (bandKindName)
    bool baselines = false;
    std::optional<bool> logY;  ///< unset: the figure's own
    bool legendOutside = true;
    double smoothing = 0;    ///< a logged column's EMA weight, in [0, 1)
    std::string x = "step";  ///< a logged column's x axis: step, relative, wall
    /// The runs compared (run.h5 paths): in a folder's file relative to that folder where they
    /// lie below it, so the view works wherever the folder is; absolute in the settings.
    std::vector<std::string> runs;
};

struct SavedView {
    std::string name;
    std::string filter;  ///< the Runs filter as typed: key=value terms and words
    /// The Runs list's fixed columns hidden, by key ("backbone", "created": runListColumns).
    /// Files written before the keys named them by header; they are read as keys.
    std::vector<std::string> hiddenColumns;
    /// Columns added after them: config keys and results, named as `lengen runs --columns`.
    std::vector<std::string> extraColumns;
    /// The column the Runs list is sorted by: a fixed column's key or an extra column's name
    /// ("" : the list's own order, newest first), and its order.
    std::string sortColumn;
    bool sortDescending = false;
    std::optional<SavedCompare> compare;   ///< unset: Compare is left as it is
    std::optional<HParamsChoice> hparams;  ///< unset: the Hyperparameters tab is left as it is
};

/// <folder>/lengen-views.json
std::string viewsFileFor(const std::string& folder);

/// Error(Usage) for a name that is empty, over 80 bytes, or holds a control character.
void checkViewName(const std::string& name);

/// The views in a views file, in its order; none when the file does not exist. A file that
/// names fixed columns by their old headers is written back with keys, once (where the folder
/// takes no write, it is read the same way each time). Error(Config)
/// naming the file and the key for a file that is not a views file, a damaged one, or a bad
/// value (a smoothing outside [0, 1), an unknown x axis, a brush without numbers).
std::vector<SavedView> readSavedViews(const std::string& file);
/// Writes the views whole (temporary file, then rename). Error(Io) naming the file.
void writeSavedViews(const std::string& file, const std::vector<SavedView>& views);
/// Adds `view` to the file, replacing the one of the same name; returns whether it replaced one.
bool storeSavedView(const std::string& file, const SavedView& view);
/// Takes the view of that name out of the file; false when it held none.
bool removeSavedView(const std::string& file, const std::string& name);

/// One view as JSON text and back: how the studio's settings keep each. `where` names the
/// source in an Error(Config) ("settings views/rope").
std::string savedViewJson(const SavedView& view);
SavedView savedViewFromJson(const std::string& text, const std::string& where);

/// The view of that name in `views`, or nullptr.
const SavedView* findView(const std::vector<SavedView>& views, const std::string& name);

}  // namespace lengen::engine
