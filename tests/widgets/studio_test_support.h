#pragma once
// What the tests of the real window share (tst_studio, tst_studio_jobs): its start options on a
// runs folder, and waiting for the controller to run everything queued.

#include <QString>
#include <QTest>

#include "main_window.h"
#include "run_controller.h"
#include "test_support.h"

namespace lengen::test {

/// The window's options: the shipped configs, new runs in `runs`.
inline studio::StudioOptions studioOptions(const QString& runs)
{
    studio::StudioOptions o;
    o.configRoot = QString::fromStdString(sourcePath("configs"));
    o.runsFolder = runs;
    o.switches.cellExecutable = LENGEN_CLI_PATH;  // the sweeps' cells run the lengen of this build
    return o;
}

/// Waits until nothing runs or waits in `c` (false after `ms`).
inline bool waitIdle(ui::RunController& c, int ms = 60000)
{
    return QTest::qWaitFor(
        [&] { return c.state() == ui::RunController::State::Idle && c.queuedCount() == 0; }, ms);
}

}  // namespace lengen::test
