#pragma once
// Scrolling over a form must scroll the form, not change the value under the cursor: combo
// boxes and spin boxes take the wheel only once they have focus (a click or Tab), the usual Qt
// remedy (Qt::StrongFocus plus an event filter that passes unfocused wheel events on to the
// scroll area). Before this, scrolling down the Set up form switched YaRN to Dynamic YaRN to PI
// and changed the layer count without a click.

class QWidget;

namespace lengen::ui {

/// Guards every QComboBox and QAbstractSpinBox under `root`, now and added later.
void guardWheel(QWidget* root);

}  // namespace lengen::ui
