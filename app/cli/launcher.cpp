// `lengen` itself is this tiny program: it blocks SIGINT and SIGTERM and executes `lengen-core`
// beside it (same process, same arguments). Loading LibTorch and its few hundred libraries
// takes a few tenths of a second before any code of ours runs; a signal in that window used to
// kill the process with the default action. A blocked signal stays pending across exec, and
// lengen-core unblocks it only once its handler is installed (early_signals.cpp), so Ctrl-C or
// SIGTERM at any moment gets the documented behaviour. No C++ runtime needed: plain libc.

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int, char** argv)
{
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigprocmask(SIG_BLOCK, &block, nullptr);

    char self[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 16);
    if (n <= 0) {
        fprintf(stderr, "lengen: cannot locate itself (/proc/self/exe): %s\n", strerror(errno));
        return 1;
    }
    self[n] = '\0';
    char* slash = strrchr(self, '/');
    strcpy(slash ? slash + 1 : self, "lengen-core");
    execv(self, argv);  // keeps argv[0]: ps and error messages still say "lengen"
    fprintf(stderr, "lengen: cannot start %s: %s (is the installation complete?)\n", self,
            strerror(errno));
    return 1;
}
