#pragma once
// A menu of checkable choices that stays open while the user ticks several (the Hyperparameters
// tab's Axes, the Runs list's columns; issue 70, defect 15: it closed after each tick, one
// reopening per choice). Any other action closes it as a QMenu does.

#include <QMenu>
#include <QMouseEvent>

namespace lengen::ui {

class StayOpenMenu final : public QMenu {
public:
    using QMenu::QMenu;

protected:
    void mouseReleaseEvent(QMouseEvent* e) override
    {
        if (QAction* a = actionAt(e->position().toPoint());
            a && a->isCheckable() && a->isEnabled()) {
            a->trigger();  // toggles it; the menu stays
            return;
        }
        QMenu::mouseReleaseEvent(e);
    }
};

}  // namespace lengen::ui
