#pragma once
// A menu of checkable choices that stays open while the user ticks several (the Hyperparameters
// tab's Axes, the Runs list's columns; issue 70, defect 15: it closed after each tick, one
// reopening per choice), and that only a click inside it ticks. Any other action closes it as a
// QMenu does.

#include <QMenu>
#include <QMouseEvent>

namespace lengen::ui {

class StayOpenMenu final : public QMenu {
public:
    using QMenu::QMenu;

protected:
    void mousePressEvent(QMouseEvent* e) override
    {
        m_pressedHere = e->button() == Qt::LeftButton && rect().contains(e->position().toPoint());
        QMenu::mousePressEvent(e);
    }
    // Only a click made in the menu ticks: the release of the press that opened it (a button
    // pops its menu on press; a tall menu opens over the button) toggled the item under the
    // pointer (found under Xvfb, issue 73's walk: one click on Axes dropped an axis).
    void mouseReleaseEvent(QMouseEvent* e) override
    {
        const bool clicked = m_pressedHere && e->button() == Qt::LeftButton;
        m_pressedHere = false;
        if (QAction* a = actionAt(e->position().toPoint()); a && a->isCheckable()) {
            if (clicked && a->isEnabled())
                a->trigger();  // toggles it; the menu stays
            return;
        }
        QMenu::mouseReleaseEvent(e);
    }

private:
    bool m_pressedHere = false;
};

}  // namespace lengen::ui
