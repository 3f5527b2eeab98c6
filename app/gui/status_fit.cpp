// Fitting the status bar's messages (status_fit.h).

#include "status_fit.h"

#include <QLayout>
#include <QStatusBar>

#include <algorithm>
#include <memory>

#include "analysis_progress.h"

namespace lengen::studio {

namespace {
// The status bar's width left for its message: less the widgets beside it.
int messageRoom(QStatusBar* bar)
{
    // Widths as the last change to the widgets beside it left them, now, not at the next event.
    for (auto* w : bar->findChildren<QWidget*>(QString(), Qt::FindDirectChildrenOnly))
        if (w->layout())
            w->layout()->activate();
    bar->layout()->invalidate();
    bar->layout()->activate();
    int room = bar->width() - 24;
    for (auto* w : bar->findChildren<QWidget*>(QString(), Qt::FindDirectChildrenOnly))
        if (w->isVisible())
            room -= w->width();
    return room;
}
}  // namespace

// A message longer than the status bar was cut at the window's edge (issue 70, defect 18): it
// is shortened in the middle to the room there is, and whole in the bar's tooltip. Beside a
// running analysis, the analysis's text yields its room first (the Jobs panel says it too):
// the message lost its middle there (the Xvfb pass, N4).
void fitStatusMessages(QStatusBar& statusBar)
{
    auto elided = std::make_shared<QString>();  // the shortened message shown last
    QObject::connect(
        &statusBar, &QStatusBar::messageChanged, &statusBar,
        [bar = &statusBar, elided](const QString& message) {
            if (!message.isEmpty() && message == *elided)
                return;  // the shortened one itself: its tooltip keeps the whole message
            bar->setToolTip(message);
            auto* analysis = bar->findChild<ui::AnalysisProgressArea*>();
            if (analysis)  // a cleared message gives the analysis its room back
                analysis->setTextRoom(ui::AnalysisProgressArea::fullTextRoom());
            if (message.isEmpty() || !bar->isVisible())
                return;  // no width to fit yet
            int room = messageRoom(bar);
            const int needed = bar->fontMetrics().horizontalAdvance(message);
            // A few passes: the elided text is narrower than its room by up to a character.
            for (int pass = 0; pass < 3 && needed > room && analysis && analysis->isVisible() &&
                               analysis->textRoom() > 0;
                 ++pass) {
                const int was = analysis->textRoom();
                analysis->setTextRoom(was - (needed - room));
                room = messageRoom(bar);
                if (analysis->textRoom() == was)
                    break;  // as narrow as it goes
            }
            const QString shown =
                bar->fontMetrics().elidedText(message, Qt::ElideMiddle, std::max(room, 120));
            if (shown != message) {
                *elided = shown;
                bar->showMessage(shown, 10000);
            }
        });
}

}  // namespace lengen::studio
