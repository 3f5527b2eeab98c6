#pragma once
// The Set up tab's state, with no widgets (issue 70): the config being edited (ConfigDraft, the
// studio's one config model), the run overrides beside it (Steps, Seed: 0 = as configured),
// the fields that show a value they did not apply (a refusal: "Steps “1e9”"), and the rules —
// whether Train and New sweep may start and why not, the summary of what Train will run, and
// the request it sends. The panel (setup_panel) builds the form and editor, reports edits and
// refusals here and paints; tests drive this without a window (tst_setup_model). GUI thread.

#include <QString>
#include <QStringList>

#include <optional>
#include <string>
#include <vector>

#include "config_draft.h"
#include "lengen/engine/trainer.h"

namespace lengen::ui {

/// What Train sends: the runs (one per max_length value), named by what they train.
struct TrainRequest {
    QString label;  ///< "linear_regression · RoPE"
    std::vector<engine::RunConfig> runs;
    engine::TrainOptions options;
};

/// What New sweep starts from (issue 80 §1): the draft's runs with the Steps field applied to
/// training.max_steps (a cell trains what Set up says), or why there are none, naming the field.
struct SweepBase {
    std::vector<engine::RunConfig> runs;
    QString refusal;  ///< "" when `runs` holds the config
};

class SetupModel {
public:
    ConfigDraft& draft() { return m_draft; }
    const ConfigDraft& draft() const { return m_draft; }
    /// The Steps box: 0 trains the config's max_steps.
    void setStepsOverride(int steps) { m_steps = steps; }
    int stepsOverride() const { return m_steps; }
    /// The Seed box: 0 trains the config's seed.
    void setSeedOverride(qint64 seed) { m_seed = seed; }
    /// The fields showing a value they did not apply, as the user reads them ("Steps “1e9”").
    void setRefused(QStringList fields) { m_refused = std::move(fields); }
    const QStringList& refused() const { return m_refused; }

    /// Train and New sweep need a valid config and no field showing a value it did not apply:
    /// a run started then would train what the field no longer shows.
    bool canTrain() const { return m_draft.valid() && m_refused.isEmpty(); }
    QString trainTip() const;
    QString sweepTip() const;
    /// What Train will run ("✔ task (data), family + PE: H … ; N steps …", the derived
    /// settings, a curriculum that will not finish); "" while the config does not load.
    QString summary() const;
    /// The request Train sends (into `outDir` on `device`); nullopt when it may not start.
    std::optional<TrainRequest> request(const std::string& outDir, const std::string& device) const;
    /// The base New sweep builds its cells from: the draft, Steps applied (the Seed field is
    /// not: a sweep's seeds are its own axis).
    SweepBase sweepBase() const;
    /// "linear_regression · RoPE": a run is named by what it trains, not by the file it came
    /// from (a preset edited to another PE must not carry the preset's name).
    static QString labelFor(const engine::RunConfig& run);

    // The file behind the draft (issue 80 §2: these were the panel's members).
    /// The config was read from or saved to `path` (made absolute): the editor now holds it
    /// unedited. "" (the start): text typed into the editor, no file.
    void setFile(const QString& path);
    const QString& file() const { return m_file; }
    /// The editor now differs from file().
    void markEdited() { m_edited = true; }
    bool edited() const { return m_edited; }
    /// The draft's source as messages name it: "<editor>", the file, or "editor (edited from
    /// quick.yaml)".
    QString sourceName() const;
    /// What an edit's messages call the text it changed: the file's name, or "the editor".
    QString editedName() const;
    /// Where the config's relative paths resolve: the file's folder, else the working folder.
    QString folder() const;
    /// Where Save as… proposes to write: the user's own file; never a preset under
    /// `configRoot` (the shipped configs), for which it proposes "<task>_<encoding>.yaml" in the
    /// working folder (a RoPE preset edited to ALiBi is not "…_rope.yaml"), or the preset's own
    /// name while the config does not read.
    QString defaultSavePath(const QString& configRoot) const;
    /// The preset box's entry shown: the one a cancelled switch goes back to (-1: none yet).
    void setPresetIndex(int index) { m_presetIndex = index; }
    int presetIndex() const { return m_presetIndex; }
    /// Whether choosing entry `index` of the preset box is a switch (not the one shown).
    bool isSwitch(int index) const { return index != m_presetIndex; }

private:
    ConfigDraft m_draft;
    int m_steps = 0;
    qint64 m_seed = 0;
    QStringList m_refused;
    QString m_file;         // absolute; "" for the editor's own text
    bool m_edited = false;  // the editor differs from m_file
    int m_presetIndex = -1;
};

}  // namespace lengen::ui
