#include "table_rows.h"

#include <QHeaderView>
#include <QScrollBar>
#include <QTableView>

namespace lengen::ui {

void useCompactRows(QTableView* table)
{
    table->setWordWrap(false);
    table->verticalHeader()->setDefaultSectionSize(table->fontMetrics().height() + 6);
    table->verticalHeader()->setMinimumSectionSize(table->fontMetrics().height() + 2);
}

int heightForRows(const QTableView* table, int rows)
{
    const int header =
        table->horizontalHeader()->isHidden() ? 0 : table->horizontalHeader()->sizeHint().height();
    return header + rows * table->verticalHeader()->defaultSectionSize() +
           table->horizontalScrollBar()->sizeHint().height() + 2 * table->frameWidth();
}

}  // namespace lengen::ui
