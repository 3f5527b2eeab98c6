#pragma once
// The run-setup form: task (grouped regression / boolean), backbone and position encoding,
// model size (the reference's tiny / small / standard / large or custom), curriculum with a
// preview of its schedule, and training. Filled from a validated config; an edit emits the
// YAML of the form's values (every value written out). Config problems are shown at the field
// their key path names. GUI thread only.

#include <QWidget>

#include <map>

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

    /// Shows a config's values (does not emit yamlEdited).
    void setConfig(const engine::RunConfig& config);
    /// The YAML of the form's current values (loads to the same values).
    QString yaml() const;
    /// Marks the fields that these key paths name (e.g. "model.num_attention_heads"); clears
    /// the others. Returns how many issues found a field.
    int showIssues(const std::vector<engine::ConfigIssue>& issues);
    /// The widget a key path names (nullptr if none): for tests and focus.
    QWidget* fieldFor(const std::string& keyPath) const;

Q_SIGNALS:
    void yamlEdited(QString yaml);

private:
    void onEdited();
    void onSizePreset(int index);
    void updatePreview();

    bool m_filling = false;
    QComboBox *m_task, *m_backbone, *m_pe, *m_size;
    QSpinBox *m_hidden, *m_layers, *m_heads, *m_state;
    QSpinBox *m_dStart, *m_dEnd, *m_dInc, *m_dInt, *m_pStart, *m_pEnd, *m_pInc, *m_pInt;
    QSpinBox *m_steps, *m_batch, *m_warmupSteps, *m_log, *m_save;
    QDoubleSpinBox *m_lr, *m_wd, *m_clip, *m_warmup, *m_maxLength;
    QCustomPlot* m_preview;
    std::map<std::string, QWidget*> m_fields;  // key path -> widget
    engine::RunConfig m_base;                  // values the form does not show are kept
};

}  // namespace lengen::ui
