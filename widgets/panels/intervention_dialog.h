#pragma once
// Chooses training-free length extensions (docs/interventions.md) for the open run: the ones
// that apply to its backbone and PE as checkboxes (or, for a probe, one of them), optional
// specs with parameters in the shared syntax, and for an evaluation the methods. GUI thread.

#include <QDialog>

class QButtonGroup;
class QCheckBox;
class QLineEdit;
class QLabel;

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

private:
    void validate();

    Mode m_mode;
    QList<QCheckBox*> m_boxes;
    QButtonGroup* m_group;
    QLineEdit* m_extra;
    QCheckBox *m_standard = nullptr, *m_ood = nullptr;
    QLabel* m_problem;
};

}  // namespace lengen::ui
