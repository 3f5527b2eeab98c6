#pragma once
// Setting up a run: a preset (the quick CPU presets and the reference's configs), the YAML
// editor (`!include` resolved next to the file it came from), inline validation with every
// problem listed at its line, overrides (steps, seed, device, output folder), Train / Queue and
// a sweep over position encodings (the common comparison: one task, every PE, queued).
// GUI thread only.

#include <QWidget>

#include <vector>

#include "lengen/engine/config.h"
#include "lengen/engine/trainer.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPlainTextEdit;
class QSpinBox;
class QTimer;

namespace lengen::ui {

class RunForm;

/// A validated request: one config per model.max_length value, and the options to train with.
struct TrainRequest {
    QString label;                         ///< e.g. "linear_regression_rope"
    std::vector<engine::RunConfig> runs;
    engine::TrainOptions options;
};

class SetupPanel final : public QWidget {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(SetupPanel)

public:
    /// `configRoot`: the folder with quick/ and tasks/ (the presets offered).
    explicit SetupPanel(const QString& configRoot, QWidget* parent = nullptr);

    bool loadFile(const QString& path);
    bool saveFile(const QString& path);
    QString currentFile() const { return m_file; }
    QString text() const;
    void setText(const QString& yaml);
    /// Validates now; returns the issues (empty when the config loads).
    QStringList validate();
    /// The request the Train button would send (nullopt + issues shown if invalid).
    std::optional<TrainRequest> request();
    void setOutputFolder(const QString& dir);
    QString outputFolder() const;
    void setSteps(int steps);
    RunForm* form() const { return m_form; }

    /// The request for a sweep: `base` once per position encoding in `pes` (engine names:
    /// rope, nope, alibi, …), each with its own label; the run's other values are kept and
    /// the PE's derived values (YaRN factor, FIRE width) recomputed. Llama backbone only:
    /// throws ConfigError when `base` is Mamba or GPT-2, or a PE does not validate.
    static std::vector<TrainRequest> sweepRequests(const TrainRequest& base, const QStringList& pes);
    /// A run's job label: task and position encoding ("linear_regression · NoPE").
    static QString labelFor(const engine::RunConfig& run);

Q_SIGNALS:
    void trainRequested(lengen::ui::TrainRequest request);
    void statusMessage(QString message);

private:
    void fillPresets(const QString& root);
    void onOpen();
    void onSaveAs();
    void onSweep();
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
    QString m_file;
    std::vector<int> m_issueLines;
};

}  // namespace lengen::ui

Q_DECLARE_METATYPE(lengen::ui::TrainRequest)
