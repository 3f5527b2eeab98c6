#include "early_signals.h"

#include <csignal>
#include <cstdlib>
#include <ctime>

#include "lengen/engine/run_control.h"

namespace lengen::cli {

namespace {

volatile std::sig_atomic_t g_early = 0;

void recordEarly(int sig) { g_early = sig; }

engine::RunControl* g_control = nullptr;
volatile std::sig_atomic_t g_secondLeaves = 0;
volatile std::sig_atomic_t g_stopCount = 0;
volatile std::sig_atomic_t g_lastStopSecond = 0;  // CLOCK_MONOTONIC seconds of the last stop

void onInterrupt(int)
{
    if (countStop() > 1 && g_secondLeaves)
        std::_Exit(130);
    if (g_control)
        g_control->requestCancelFromSignal();
}

void installEarly(int, char**, char**)
{
    struct sigaction sa = {};
    sa.sa_handler = recordEarly;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    std::signal(SIGXFSZ, SIG_IGN);
    // The launcher (launcher.cpp) blocked both before exec: what arrived while the libraries
    // were mapped is delivered now, to recordEarly.
    sigset_t both;
    sigemptyset(&both);
    sigaddset(&both, SIGINT);
    sigaddset(&both, SIGTERM);
    sigprocmask(SIG_UNBLOCK, &both, nullptr);
}

}  // namespace

// Executables only: runs after relocation, before every shared library's constructors.
__attribute__((section(".preinit_array"), used)) void (*const g_preinit)(int, char**,
                                                                         char**) = installEarly;

// Until a command installs its own handlers: the documented exit 130, not death by the signal
// (a SIGTERM between main() and a training's handlers killed it; tst_reliability at 400 ms).
static void exitInterrupted(int) { std::_Exit(130); }

int takeOverSignals()
{
    struct sigaction sa = {};
    sa.sa_handler = exitInterrupted;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    return g_early;
}

int countStop()
{
    // One stop can arrive twice: GNU `timeout -s INT` signals the command, then its whole
    // process group, the command again. A signal within a second of the last is that same stop;
    // only a later one (a second Ctrl-C) counts. clock_gettime is async-signal-safe.
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    const auto second = static_cast<std::sig_atomic_t>(now.tv_sec);
    if (g_stopCount == 0 || second - g_lastStopSecond > 1)
        ++g_stopCount;
    g_lastStopSecond = second;
    return g_stopCount;
}

void interruptsStop(engine::RunControl& control, bool secondLeaves)
{
    g_control = &control;
    g_secondLeaves = secondLeaves ? 1 : 0;
    std::signal(SIGINT, onInterrupt);
    std::signal(SIGTERM, onInterrupt);
}

}  // namespace lengen::cli
