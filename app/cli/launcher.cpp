// `lengen` itself is this tiny program: it blocks SIGINT and SIGTERM and executes the real
// command line beside it (same process, same arguments):
// - `lengen-light` for the commands that read or move runs and never touch a tensor (runs,
//   info, note, delete, sweep status, …: kLight below). It has no LibTorch, so it starts in a
//   few milliseconds; users type these in loops, under `watch` and in completion (issue 82).
// - `lengen-core` for every other command, `--help` and anything it does not recognise.
// Both parse with the same command files, so a user cannot tell which one ran (tst_cli checks
// that each light command's --help and errors are the same in both).
// Loading LibTorch and its few hundred libraries takes a few tenths of a second before any code
// of ours runs; a signal in that window used to kill the process with the default action. A
// blocked signal stays pending across exec, and the program unblocks it only once its handler
// is installed (early_signals.cpp), so Ctrl-C or SIGTERM at any moment gets the documented
// behaviour. No C++ runtime needed: plain libc.

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

namespace {

// The commands lengen-light holds (app/cli/CMakeLists.txt builds it from their files alone).
// A sweep command is light by its second word.
const char* const kLight[] = {"runs",    "list",     "jobs", "note", "delete", "archive",
                              "restore", "validate", "info", "stop", nullptr};
const char* const kLightSweep[] = {"new", "status", "table", "cancel", "aggregate", nullptr};

bool listed(const char* const* names, const char* word)
{
    for (; word && *names; ++names)
        if (strcmp(*names, word) == 0)
            return true;
    return false;
}

bool isLight(int argc, char** argv)
{
    if (argc < 2)
        return false;
#ifdef LENGEN_LIGHT_VERSION  // a CPU-only LibTorch: its version is known when building
    if (argc == 2 && strcmp(argv[1], "--version") == 0)
        return true;
#endif
    if (strcmp(argv[1], "sweep") == 0)
        return argc >= 3 && listed(kLightSweep, argv[2]);
    return listed(kLight, argv[1]);
}

}  // namespace

int main(int argc, char** argv)
{
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigprocmask(SIG_BLOCK, &block, nullptr);

    // When this command began, on the clock file times are stamped with (the coarse real-time
    // clock): `sweep run` clears only the cancel marks written before it (issue 54), and
    // /proc/self/stat knows its start to 10 ms only, while `lengen sweep cancel`, started just
    // after it, writes its marks in a few milliseconds.
    struct timespec now;
    clock_gettime(CLOCK_REALTIME_COARSE, &now);
    char launched[40];
    snprintf(launched, sizeof launched, "%lld.%09ld", (long long)now.tv_sec, now.tv_nsec);
    setenv("LENGEN_LAUNCHED_AT", launched, 1);

    char self[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 16);
    if (n <= 0) {
        fprintf(stderr, "lengen: cannot locate itself (/proc/self/exe): %s\n", strerror(errno));
        return 1;
    }
    self[n] = '\0';
    char* slash = strrchr(self, '/');
    char* name = slash ? slash + 1 : self;
    if (isLight(argc, argv)) {
        strcpy(name, "lengen-light");
        execv(self, argv);  // keeps argv[0]: ps and error messages still say "lengen"
        // Not there (a partial installation): lengen-core runs every command too.
    }
    strcpy(name, "lengen-core");
    execv(self, argv);
    fprintf(stderr, "lengen: cannot start %s: %s (is the installation complete?)\n", self,
            strerror(errno));
    return 1;
}
