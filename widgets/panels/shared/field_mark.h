#pragma once
// One look for a field whose value is refused (a refused number, a config issue, a dialog's
// field a check named): a pink ground and red text, set through the palette. A style sheet with
// a border did this before; under Fusion it turns a spin box's arrows and a combo box's
// drop-down into the style-sheet drawing ("≡", issue 80), so no field is marked that way.
// GUI thread only.

class QWidget;

namespace lengen::ui {

/// Marks `w` as refused (true) or gives it its inherited palette back (false).
void markRefused(QWidget* w, bool on);
/// Whether `w` carries the mark: its text colour is the refusal red.
bool isMarkedRefused(const QWidget* w);

}  // namespace lengen::ui
