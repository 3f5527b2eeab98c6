#pragma once
// Number fields that refuse what they cannot hold instead of changing it (issue 41, defect 5).
// The text is judged at each keystroke too: red, with the reason in the tooltip, before the
// commit. A plain QSpinBox drops the keystrokes it cannot take, so "-500" steps became 500 and
// "1e9" hidden became 19, silently. These keep every typed character; when the text is committed
// (Enter, or focus leaving) and is not a value in range, the field goes back to its value from
// before the edit (typing applies each valid prefix as it goes: "1" of "1e9" was 1),
// shows "<typed> ✗ not applied" in red, and says why in its tooltip, as a refused YAML value
// is shown. Both read scientific notation ("1e3" steps, a learning rate of 3e-4); a value the
// double field cannot hold at its decimals is refused, not rounded.
// GUI thread only.

#include <QDoubleSpinBox>
#include <QSpinBox>

namespace lengen::ui {

/// The refused text of a refusing box ("" for any other widget, or one that holds its text).
QString refusedText(const QWidget* w);
/// Clears a refusing box's refusal (nothing for any other widget).
void clearRefusal(QWidget* w);

class RefusingSpinBox final : public QSpinBox {
public:
    RefusingSpinBox(int lo, int hi, QWidget* parent = nullptr);
    /// The refused text ("" when the field holds what it shows).
    QString refused() const { return m_refused; }
    /// Forgets a refusal: the field shows its value again, unmarked (another config loaded).
    void clearRefusal();

protected:
    QValidator::State validate(QString& text, int& pos) const override;
    void fixup(QString& text) const override;
    int valueFromText(const QString& text) const override;
    void focusInEvent(QFocusEvent* e) override;
    void focusOutEvent(QFocusEvent* e) override;
    void keyPressEvent(QKeyEvent* e) override;

private:
    void judgeTyped();
    QString m_refused;
    int m_committed = 0;  ///< the value before this edit began: what a refusal goes back to
    friend struct RefusalSteps;
};

class RefusingDoubleSpinBox final : public QDoubleSpinBox {
public:
    RefusingDoubleSpinBox(double lo, double hi, int decimals, double step,
                          QWidget* parent = nullptr);
    QString refused() const { return m_refused; }
    void clearRefusal();

protected:
    QValidator::State validate(QString& text, int& pos) const override;
    void fixup(QString& text) const override;
    double valueFromText(const QString& text) const override;
    QString textFromValue(double value) const override;
    void focusInEvent(QFocusEvent* e) override;
    void focusOutEvent(QFocusEvent* e) override;
    void keyPressEvent(QKeyEvent* e) override;

private:
    void judgeTyped();
    QString m_refused;
    double m_committed = 0;
    friend struct RefusalSteps;
};

}  // namespace lengen::ui
