#include "refusing_spin_box.h"

#include "field_mark.h"

#include <QKeyEvent>
#include <QLineEdit>
#include <QLocale>

#include <algorithm>
#include <cmath>

namespace lengen::ui {

namespace {

const QString kMark = QStringLiteral(" ✗ not applied");

QString typedText(const QAbstractSpinBox& box, const QLineEdit& edit)
{
    QString t = edit.text();
    if (t.endsWith(kMark))
        t.chop(kMark.size());
    t.remove(0, box.property("lengenPrefix").toString().size());
    return t.trimmed();
}

// Why `typed` is not a value of [lo, hi] ("" when it is one).
template <typename T>
QString reasonFor(const QString& typed, bool parsed, T value, T lo, T hi, bool whole)
{
    if (typed.isEmpty())
        return QString();
    if (!parsed)
        return QSpinBox::tr("“%1” is not %2")
            .arg(typed, whole ? QSpinBox::tr("a whole number") : QSpinBox::tr("a number"));
    if (value < lo)
        return QSpinBox::tr("%1 is below the smallest value, %2").arg(typed).arg(lo);
    if (value > hi)
        return QSpinBox::tr("%1 is above the largest value, %2").arg(typed).arg(hi);
    return QString();
}

}  // namespace

// The steps both boxes share: read the typed text before Qt corrects it, and once Qt has put
// the previous value back, show the refused text instead (the value stays the previous one).
struct RefusalSteps {
    template <typename Box>
    static QString check(Box& box, const QString& reason)
    {
        box.m_refused = reason.isEmpty() ? QString() : typedText(box, *box.lineEdit());
        return reason;
    }
    // Back in the field: remember what a refusal returns to, and offer the refused text
    // without its mark, to edit or replace (red until the next commit says otherwise).
    template <typename Box, typename Base>
    static void focusIn(Box& box, Base base)
    {
        box.m_committed = box.value();
        base();
        resume(box);
    }
    // Enter, or focus leaving: the typed text judged before Qt corrects it, then the verdict
    // shown; after Enter the refused text is selected, so the next keystroke replaces it.
    template <typename Box, typename Base>
    static void commit(Box& box, const QString& reason, Base base, bool enter)
    {
        check(box, reason);
        base();
        show(box, reason);
        if (enter && !box.m_refused.isEmpty())
            box.lineEdit()->selectAll();
    }
    static bool commits(const QKeyEvent* e)
    {
        return e->key() == Qt::Key_Return || e->key() == Qt::Key_Enter;
    }
    template <typename Box>
    static void clear(Box& box)
    {
        box.m_refused.clear();
        show(box, QString());
        box.lineEdit()->setText(box.textFromValue(box.value()));
        if (box.value() == box.minimum() && !box.specialValueText().isEmpty())
            box.lineEdit()->setText(box.specialValueText());
    }
    template <typename Box>
    static void resume(Box& box)
    {
        if (!box.m_refused.isEmpty())
            box.lineEdit()->setText(box.m_refused);
    }
    template <typename Box>
    static void show(Box& box, const QString& reason)
    {
        if (!box.m_refused.isEmpty() && box.value() != box.m_committed) {
            const QString refused = box.m_refused;
            box.setValue(box.m_committed);  // emits: the config gets its value back
            box.m_refused = refused;
        }
        box.m_committed = box.value();
        mark(box, "lengenTyping", false, QString());
        if (box.m_refused.isEmpty())
            return mark(box, "lengenRefusing", false, QString());
        box.lineEdit()->setText(box.m_refused + kMark);
        mark(box, "lengenRefusing", true,
             reason + QSpinBox::tr("; the field keeps %1").arg(box.textFromValue(box.value())));
    }
    // At each keystroke: red as soon as the text could not be applied, with the reason in the
    // tooltip (issue 80: the field said nothing until focus left); Enter or leaving decides.
    template <typename Box>
    static void typing(Box& box, const QString& reason)
    {
        mark(box, "lengenTyping", !reason.isEmpty(), reason);
    }
    // Two reasons to be marked, the typed text and a refusal: the field's own tooltip is kept
    // while either holds and given back when neither does.
    static void mark(QWidget& w, const char* why, bool on, const QString& tip)
    {
        const auto marked = [&w] {
            return w.property("lengenRefusing").toBool() || w.property("lengenTyping").toBool();
        };
        const bool was = marked();
        if (on && !was)
            w.setProperty("lengenTip", w.toolTip());
        w.setProperty(why, on);
        if (on) {
            markRefused(&w, true);
            w.setToolTip(tip);
        } else if (was && !marked()) {
            markRefused(&w, false);
            w.setToolTip(w.property("lengenTip").toString());
        }
    }
};

RefusingSpinBox::RefusingSpinBox(int lo, int hi, QWidget* parent) : QSpinBox(parent)
{
    setRange(lo, hi);
    connect(lineEdit(), &QLineEdit::textEdited, this, [this] { judgeTyped(); });
}

// "1e3" is a whole number written another way: read by its value, so it is never the "1"
// keyboard tracking applied on the way and then quietly kept.
static bool wholeNumber(const QString& text, double& v)
{
    bool ok = false;
    v = text.trimmed().toDouble(&ok);
    return ok && std::isfinite(v) && v == std::floor(v);
}

void RefusingSpinBox::clearRefusal() { RefusalSteps::clear(*this); }
void RefusingDoubleSpinBox::clearRefusal() { RefusalSteps::clear(*this); }

QString refusedText(const QWidget* w)
{
    if (const auto* i = dynamic_cast<const RefusingSpinBox*>(w))
        return i->refused();
    if (const auto* d = dynamic_cast<const RefusingDoubleSpinBox*>(w))
        return d->refused();
    return {};
}

void clearRefusal(QWidget* w)
{
    if (auto* i = dynamic_cast<RefusingSpinBox*>(w))
        i->clearRefusal();
    else if (auto* d = dynamic_cast<RefusingDoubleSpinBox*>(w))
        d->clearRefusal();
}

QValidator::State RefusingSpinBox::validate(QString& text, int& pos) const
{
    if (!specialValueText().isEmpty() && text == specialValueText())
        return QValidator::Acceptable;  // "off", "as configured": the minimum
    double v = 0;
    if (wholeNumber(text, v) && v >= minimum() && v <= maximum())
        return QValidator::Acceptable;
    const auto s = QSpinBox::validate(text, pos);
    return s == QValidator::Invalid ? QValidator::Intermediate : s;  // keep what was typed
}

int RefusingSpinBox::valueFromText(const QString& text) const
{
    double v = 0;
    return wholeNumber(text, v) ? int(v) : QSpinBox::valueFromText(text);
}

// Never rewrite the user's text; an emptied box with a special value ("as configured") is that
// value: the way back from an override (it went back to the last number).
void RefusingSpinBox::fixup(QString& text) const
{
    if (text.trimmed().isEmpty() && !specialValueText().isEmpty())
        text = specialValueText();
}

static QString intReason(const RefusingSpinBox& box, const QString& typed)
{
    if (!box.specialValueText().isEmpty() && typed == box.specialValueText())
        return QString();
    // "1e9" is a whole number too, only written another way: judged by its value.
    bool ok = false;
    const double v = typed.trimmed().toDouble(&ok);
    if (ok && std::isfinite(v) && v != std::floor(v))
        return QSpinBox::tr("%1 is not a whole number").arg(typed);
    return reasonFor<double>(typed, ok && std::isfinite(v), v, box.minimum(), box.maximum(), true);
}

void RefusingSpinBox::judgeTyped()
{
    RefusalSteps::typing(*this, intReason(*this, typedText(*this, *lineEdit())));
}

void RefusingSpinBox::focusInEvent(QFocusEvent* e)
{
    RefusalSteps::focusIn(*this, [&] { QSpinBox::focusInEvent(e); });
}

void RefusingSpinBox::focusOutEvent(QFocusEvent* e)
{
    const auto reason = intReason(*this, typedText(*this, *lineEdit()));
    RefusalSteps::commit(
        *this, reason, [&] { QSpinBox::focusOutEvent(e); }, false);
}

void RefusingSpinBox::keyPressEvent(QKeyEvent* e)
{
    if (!RefusalSteps::commits(e))
        return QSpinBox::keyPressEvent(e);
    const auto reason = intReason(*this, typedText(*this, *lineEdit()));
    RefusalSteps::commit(
        *this, reason, [&] { QSpinBox::keyPressEvent(e); }, true);
}

RefusingDoubleSpinBox::RefusingDoubleSpinBox(double lo, double hi, int decimals, double step,
                                             QWidget* parent)
    : QDoubleSpinBox(parent)
{
    setRange(lo, hi);
    setDecimals(decimals);
    setSingleStep(step);
    connect(lineEdit(), &QLineEdit::textEdited, this, [this] { judgeTyped(); });
}

// Plain or scientific notation in the C locale (how configs write numbers).
static bool parseNumber(const QString& text, double& v)
{
    bool ok = false;
    v = text.trimmed().toDouble(&ok);
    return ok && std::isfinite(v);
}

// Whether the field holds `v` as typed: setValue rounds to decimals(), which would change
// "3e-7" into 0 without a word.
static bool fitsDecimals(double v, int decimals)
{
    const double scaled = v * std::pow(10.0, decimals);
    return std::abs(scaled - std::round(scaled)) <= 1e-6 * std::max(1.0, std::abs(scaled));
}

QValidator::State RefusingDoubleSpinBox::validate(QString& text, int& pos) const
{
    if (!specialValueText().isEmpty() && text == specialValueText())
        return QValidator::Acceptable;
    double v = 0;
    if (parseNumber(text, v) && v >= minimum() && v <= maximum() && fitsDecimals(v, decimals()))
        return QValidator::Acceptable;
    const auto s = QDoubleSpinBox::validate(text, pos);
    return s == QValidator::Invalid ? QValidator::Intermediate : s;
}

QString RefusingDoubleSpinBox::textFromValue(double value) const
{
    // The shortest text that reads back (0.0003, not 0.000300000000): many decimals are allowed
    // so that learning rates keep their digits, none are shown that the value lacks.
    return QLocale::c().toString(value, 'g', 12);
}

void RefusingDoubleSpinBox::fixup(QString&) const {}

double RefusingDoubleSpinBox::valueFromText(const QString& text) const
{
    double v = 0;
    return parseNumber(text, v) ? v : QDoubleSpinBox::valueFromText(text);
}

static QString doubleReason(const RefusingDoubleSpinBox& box, const QString& typed)
{
    if (!box.specialValueText().isEmpty() && typed == box.specialValueText())
        return QString();
    double v = 0;
    const bool ok = parseNumber(typed, v);
    if (ok && v >= box.minimum() && v <= box.maximum() && !fitsDecimals(v, box.decimals()))
        return QDoubleSpinBox::tr("%1 needs more than the field's %n decimal(s)", nullptr,
                                  box.decimals())
            .arg(typed);
    return reasonFor<double>(typed, ok, v, box.minimum(), box.maximum(), false);
}

void RefusingDoubleSpinBox::judgeTyped()
{
    RefusalSteps::typing(*this, doubleReason(*this, typedText(*this, *lineEdit())));
}

void RefusingDoubleSpinBox::focusInEvent(QFocusEvent* e)
{
    RefusalSteps::focusIn(*this, [&] { QDoubleSpinBox::focusInEvent(e); });
}

void RefusingDoubleSpinBox::focusOutEvent(QFocusEvent* e)
{
    const auto reason = doubleReason(*this, typedText(*this, *lineEdit()));
    RefusalSteps::commit(
        *this, reason, [&] { QDoubleSpinBox::focusOutEvent(e); }, false);
}

void RefusingDoubleSpinBox::keyPressEvent(QKeyEvent* e)
{
    if (!RefusalSteps::commits(e))
        return QDoubleSpinBox::keyPressEvent(e);
    const auto reason = doubleReason(*this, typedText(*this, *lineEdit()));
    RefusalSteps::commit(
        *this, reason, [&] { QDoubleSpinBox::keyPressEvent(e); }, true);
}

}  // namespace lengen::ui
