#pragma once
// One row height for the studio's tables, and the height a table needs to show some rows. The
// Runs list's compact rows (a line of text and 6 px) were its own; the Hyperparameters and
// Compare tables kept Qt's taller default, so at 1280 x 800 the one showed 3 runs and the other
// one config key (issue 80). GUI thread only.

class QTableView;

namespace lengen::ui {

/// Rows one line of the table's font tall, and no wrapping onto a second line.
void useCompactRows(QTableView* table);
/// The height that shows the header and `rows` rows, with the frame and a horizontal scroll
/// bar (a wide table has one).
int heightForRows(const QTableView* table, int rows);

}  // namespace lengen::ui
