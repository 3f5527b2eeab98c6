#pragma once
// The run-setup form: task (grouped regression / boolean), backbone and position encoding,
// model size (the reference's tiny / small / standard / large or custom), curriculum with a
// preview of its schedule, and training. It shows a config and writes the fields the user
// changed back into one (applyTo); it writes no YAML (ConfigDraft and the engine's emitter
// do). Config problems are shown at the field their key path names. GUI thread only.

#include <QWidget>

#include <map>
#include <variant>

#include "lengen/engine/config.h"

class QComboBox;
class QCustomPlot;
class QDoubleSpinBox;
class QSpinBox;

namespace lengen::ui {

class RunForm final : public QWidget {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(RunForm)

public:
    explicit RunForm(QWidget* parent = nullptr);

    /// Shows a config's values (does not emit edited()). A field already showing its value is
    /// left alone, so refreshing while the user types keeps the cursor.
    void setConfig(const engine::RunConfig& config);
    /// Writes the fields changed since setConfig into `config`; a field the user did not touch
    /// leaves its key as it was (a value the widget would round stays exact). Changing the
    /// backbone, PE or task also sets what they imply (setBackbone, setPositionEncoding).
    void applyTo(engine::RunConfig& config) const;
    /// Marks the fields that these key paths name (e.g. "model.num_attention_heads"); clears
    /// the others. Returns how many issues found a field.
    /// A marked field no longer shows the last valid value: it shows "✗ not applied" with the
    /// text the user typed (`typed`, by key path) until the config is valid again.
    int showIssues(const std::vector<engine::ConfigIssue>& issues,
                   const std::map<std::string, QString>& typed = {});
    /// Whether the field of this key path shows "not applied" (tests).
    bool showsNotApplied(const std::string& keyPath) const;
    /// The widget a key path names (nullptr if none): for tests and focus.
    QWidget* fieldFor(const std::string& keyPath) const;

    /// Fields that show a typed value they refused ("model.hidden_size “-5”"): Train waits
    /// until they are resolved (issue 52).
    QStringList refusedFields() const;
    /// Forgets every refusal (another config was loaded: its values are what the form shows).
    void clearRefusals();
    /// The steps Train will run when the Set up panel's Steps box overrides max_steps (0 = as
    /// configured): the curriculum preview follows it (issue 52). `refused`: what the Steps box
    /// refused ("" when it holds what it shows); the preview's axis says so.
    void setStepsOverride(int steps, const QString& refused = QString());
    /// The preview's x axis label (tests).
    QString previewAxisLabel() const;
    /// The preview's last step and its curves' values there (tests).
    struct PreviewEnd {
        std::int64_t step = 0;
        int dims = 0, points = 0;
    };
    PreviewEnd previewEnd() const { return m_previewEnd; }

Q_SIGNALS:
    /// A field changed (while typing too): apply it with applyTo.
    void edited();
    /// A field committed what was typed: refusedFields() may have changed.
    void refusalsChanged();

private:
    void createFields();
    void layOut();
    void onEdited();
    void onSizePreset(int index);
    void updatePreview();
    bool touched(QWidget* field) const;
    void fillCombo(QComboBox* box, const QString& data);
    void fillSpin(QSpinBox* box, std::int64_t v);
    void fillDoubleSpin(QDoubleSpinBox* box, double v);
    void showModel(const engine::RunConfig& c);
    bool showMaxLength(const engine::RunConfig& c);
    void showCurriculumAndTraining(const engine::RunConfig& c);
    void enableFor(const engine::RunConfig& c, bool lengthList);

    bool m_filling = false;
    QComboBox *m_task, *m_backbone, *m_pe, *m_size;
    QSpinBox *m_hidden, *m_layers, *m_heads, *m_state;
    QSpinBox *m_dStart, *m_dEnd, *m_dInc, *m_dInt, *m_pStart, *m_pEnd, *m_pInc, *m_pInt;
    QSpinBox *m_steps, *m_batch, *m_warmupSteps, *m_log, *m_save;
    QSpinBox* m_randomPositions;  // training.random_positions.max_position; 0 = off
    QDoubleSpinBox *m_lr, *m_wd, *m_clip, *m_warmup, *m_maxLength;
    QCustomPlot* m_preview;
    int m_stepsOverride = 0;
    QString m_stepsRefused;  ///< what the Steps box refused, said on the preview's axis
    PreviewEnd m_previewEnd;
    std::map<std::string, QWidget*> m_fields;               // key path -> widget
    std::map<QWidget*, std::variant<int, double>> m_shown;  // what setConfig put in each field
};

}  // namespace lengen::ui
