#pragma once
// Setting up a run: a preset (the quick CPU presets and the reference's configs), the YAML
// editor (`!include` resolved next to the file it came from), inline validation with every
// problem listed at its line, overrides (steps, seed, device, output folder), Train / Queue and
// a sweep over position encodings (the common comparison: one task, every PE, queued).
// The config being edited is one ConfigDraft: the editor's text and the form both change it,
// and the engine alone parses, derives and validates. GUI thread only.

#include <QWidget>

#include <vector>

#include "config_draft.h"
#include "lengen/engine/config.h"
#include "lengen/engine/trainer.h"
#include "setup_model.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;
class QTimer;

namespace lengen::ui {

class RunForm;

/// A validated request: one config per model.max_length value, and the options to train with.

class SetupPanel final : public QWidget {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(SetupPanel)

public:
    /// `configRoot`: the folder with quick/ and tasks/ (the presets offered).
    explicit SetupPanel(const QString& configRoot, QWidget* parent = nullptr);

    bool loadFile(const QString& path);
    bool saveFile(const QString& path);
    QString currentFile() const { return m_model.file(); }
    /// True when the editor holds edits not saved to currentFile().
    bool hasUnsavedEdits() const { return m_model.edited(); }
    /// The name validation messages give the text: the file, or "editor (edited from …)".
    QString sourceName() const;
    /// The one config model (what the form shows and Train would send when valid).
    const ConfigDraft& draft() const { return m_model.draft(); }
    /// The tab's state (setup_model.h): the draft, the overrides, the refusals, the rules.
    const SetupModel& model() const { return m_model; }
    /// Where Save as… proposes to write: the current file unless it is a shipped preset, then
    /// "<task>_<encoding>.yaml" of what the config trains, in the working folder.
    QString defaultSavePath() const;
    /// Save as… (the panel's button and File ▸ Save config as…): asks where, from
    /// defaultSavePath (the dialog opens with open(); it returns at once), then saveAsPath.
    void saveAs();
    /// Writes the editor's text to `path`, after confirming when it is a shipped preset;
    /// says so in the status line, or in a warning box when it cannot write.
    void saveAsPath(const QString& path);
    QString text() const;
    void setText(const QString& yaml);
    /// Validates now; returns the issues (empty when the config loads).
    QStringList validate();
    /// The request the Train button would send (nullopt + issues shown if invalid).
    std::optional<TrainRequest> request();
    /// What New sweep starts from (the model's sweepBase, the text parsed if it changed).
    SweepBase sweepBase();
    void setOutputFolder(const QString& dir);
    QString outputFolder() const;
    void setSteps(int steps);
    RunForm* form() const { return m_form; }
    /// What the form and the run overrides refuse ("model.hidden_size “-5”", "Steps “-500”"):
    /// Train is disabled, and its tooltip names them, until they are resolved (issue 52).
    QStringList refusedFields() const;

    /// A run's job label: task and position encoding ("linear_regression · NoPE").
    static QString labelFor(const engine::RunConfig& run);
    /// The summary line under the form: what Train will run (tests).
    QString summaryText() const;

Q_SIGNALS:
    void trainRequested(lengen::ui::TrainRequest request);
    /// "Sweep position encodings…": the window opens the Sweeps tab's New sweep on this config
    /// (one path for sweeps, whichever button starts one).
    void sweepRequested();
    void statusMessage(QString message);

private:
    void createControls();
    void layOut(QPushButton* open, QPushButton* saveAs);
    void wireControls(QPushButton* open, QPushButton* saveAs);
    void showSummary();
    void updateTrain();
    void fillPresets(const QString& root);
    void onOpen();
    void onSweep();
    void onFormEdited();
    void onPresetChosen(int index);
    bool confirmDiscard();
    void selectPreset(const QString& path);
    QStringList showResult();
    void jumpToIssue(int row);

    RunForm* m_form;
    QComboBox* m_preset;
    QPlainTextEdit* m_editor;
    QListWidget* m_issues;
    QLabel* m_summary;
    QSpinBox *m_steps, *m_seed;
    QComboBox* m_device;
    QLineEdit* m_out;
    QTimer* m_validate;
    QPushButton *m_train, *m_sweep;
    QString m_configRoot;
    SetupModel m_model;
    bool m_settingText = false;  // the panel itself is replacing the editor's text
    std::vector<int> m_issueLines;
};

}  // namespace lengen::ui

Q_DECLARE_METATYPE(lengen::ui::TrainRequest)
