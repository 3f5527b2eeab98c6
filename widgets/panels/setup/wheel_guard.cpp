#include "wheel_guard.h"

#include <QAbstractSpinBox>
#include <QComboBox>
#include <QEvent>
#include <QWidget>

namespace lengen::ui {

namespace {

bool guarded(const QObject* o)
{
    return qobject_cast<const QComboBox*>(o) || qobject_cast<const QAbstractSpinBox*>(o);
}

class WheelGuard final : public QObject {
public:
    using QObject::QObject;

    void guard(QWidget* w)
    {
        w->setFocusPolicy(Qt::StrongFocus);
        w->installEventFilter(this);
    }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override
    {
        if (event->type() == QEvent::Wheel && guarded(watched) &&
            !static_cast<QWidget*>(watched)->hasFocus()) {
            event->ignore();  // the parent (the scroll area) gets it and scrolls
            return true;
        }
        if (event->type() == QEvent::ChildAdded) {
            // Fields a form adds later (a PE's own section) are guarded too.
            auto* child = static_cast<QChildEvent*>(event)->child();
            if (child && child->isWidgetType())
                guardTree(static_cast<QWidget*>(child));
        }
        return false;
    }

public:
    void guardTree(QWidget* root)
    {
        if (guarded(root))
            guard(root);
        root->installEventFilter(this);  // for ChildAdded
        for (auto* w : root->findChildren<QWidget*>())
            if (guarded(w))
                guard(w);
    }
};

}  // namespace

void guardWheel(QWidget* root)
{
    auto* g = new WheelGuard(root);  // lives as long as the form
    g->guardTree(root);
}

}  // namespace lengen::ui
