#pragma once
// The studio's style: the platform's (Fusion where there is none) with one change, made once
// for the application (main, and the tests that open combo boxes).
//
// A combo box's list drops below it instead of opening over it. Opened over it, the list puts
// the chosen item under the pointer; pushed down by the screen's top edge it could not, and the
// item under the pointer took the hover highlight, drawn as the choice is: Compare's method
// list "highlighted an item other than the current one" (issue 80, defect 27, 3 of 3 tries in
// the Xvfb pass). Below the box, the pointer is on the box and the highlight is the choice.

namespace lengen::ui {

/// Sets the application's style to the studio's (a QProxyStyle over the current one).
/// Needs a QApplication; calling it again changes nothing.
void installStudioStyle();

}  // namespace lengen::ui
