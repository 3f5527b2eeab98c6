#pragma once
// The studio's status bar keeps its messages whole where it can: a message wider than the room
// beside the permanent widgets first takes room from a running analysis's progress text (which
// the Jobs panel shows too), and only then is shortened in the middle, whole in the bar's
// tooltip. A cleared message gives the analysis its room back.

class QStatusBar;

namespace lengen::studio {

/// Connects the fitting to `statusBar`'s messages for its lifetime.
void fitStatusMessages(QStatusBar& statusBar);

}  // namespace lengen::studio
