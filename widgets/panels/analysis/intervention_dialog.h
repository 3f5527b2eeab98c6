#pragma once
// Chooses training-free length extensions (docs/interventions.md) for the open run: the ones
// that apply to its backbone and PE as checkboxes (or, for a probe, one of them), optional
// specs with parameters in the shared syntax, and for an evaluation the methods. GUI thread.

#include <QDialog>

#include <functional>
#include <memory>

class QButtonGroup;
class QCheckBox;
class QLineEdit;
class QLabel;

namespace lengen::engine {
struct RunConfig;
}

namespace lengen::ui {

class InterventionDialog final : public QDialog {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(InterventionDialog)

public:
    enum class Mode { Evaluate, Probe };
    /// `applicable`: the run's interventions (none first, as applicableInterventions gives).
    InterventionDialog(Mode mode, const QString& runLabel, const QStringList& applicable,
                       QWidget* parent = nullptr);
    /// The chosen specs as written (checked names, then the extra text's pieces): evaluation
    /// gets them all, a probe the first.
    QStringList interventions() const;
    /// Evaluation methods ticked (standard, ood_length).
    QStringList methods() const;
    /// Ticks these (names or specs in the extra field), for tests and for repeating a choice.
    void choose(const QStringList& specs);
    /// The open run's config: specs it refuses, or values out of range for it, are refused in
    /// the dialog (OK disabled, the engine's reason shown) before it closes.
    void setRunConfig(const engine::RunConfig& config);

private:
    void validate();

    Mode m_mode;
    QList<QCheckBox*> m_boxes;
    QButtonGroup* m_group;
    QLineEdit* m_extra;
    QCheckBox *m_standard = nullptr, *m_ood = nullptr;
    QLabel* m_problem;
    std::shared_ptr<const engine::RunConfig> m_config;
    std::function<void()> m_update;
};

}  // namespace lengen::ui
