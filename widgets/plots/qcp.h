#pragma once
// QCustomPlot's header uses Qt's `signals`/`slots`/`emit`/`foreach` keywords, which the project
// turns off (QT_NO_KEYWORDS keeps Torch's `slots` members compiling). Include it through here:
// the keywords exist for this header only.

#define signals Q_SIGNALS
#define slots Q_SLOTS
#define emit Q_EMIT
#define foreach Q_FOREACH
#include <qcustomplot.h>
#undef signals
#undef slots
#undef emit
#undef foreach
