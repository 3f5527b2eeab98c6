#include "field_mark.h"

#include <QColor>
#include <QPalette>
#include <QWidget>

namespace lengen::ui {

namespace {
const QColor kGround(0xFD, 0xEC, 0xEA);  // #FDECEA
const QColor kRed(0xB0, 0x00, 0x20);     // #B00020, the studio's refusal red
}  // namespace

void markRefused(QWidget* w, bool on)
{
    if (!w)
        return;
    if (!on) {
        if (isMarkedRefused(w))
            w->setPalette(QPalette());  // an empty palette: inherited from the parent again
        return;
    }
    QPalette p = w->palette();
    // Base and Text paint an edit, a spin box and an editable combo; Button and ButtonText a
    // combo box that only lists; every colour group, so the mark stays when focus leaves.
    p.setColor(QPalette::Base, kGround);
    p.setColor(QPalette::Button, kGround);
    p.setColor(QPalette::Text, kRed);
    p.setColor(QPalette::ButtonText, kRed);
    w->setPalette(p);
}

bool isMarkedRefused(const QWidget* w) { return w && w->palette().color(QPalette::Text) == kRed; }

}  // namespace lengen::ui
