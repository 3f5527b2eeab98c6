// runCommand: fork + exec with one pipe for stdout and stderr, read with poll() so the time
// limit holds even when the program prints nothing.

#include "sweep/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>

extern char** environ;

namespace lengen::engine::sweep {

namespace {

// execvp, then /usr/sbin (Debian puts scontrol's daemons there and root's PATH may lack it).
[[noreturn]] void execSearching(std::vector<char*>& argv)
{
    execvp(argv[0], argv.data());
    if (std::string(argv[0]).find('/') == std::string::npos) {
        const std::string sbin = std::string("/usr/sbin/") + argv[0];
        execv(sbin.c_str(), argv.data());
    }
    _exit(127);
}

}  // namespace

CommandResult runCommand(const std::vector<std::string>& args, double timeoutSeconds)
{
    CommandResult result;
    int fds[2];
    if (args.empty() || pipe2(fds, O_CLOEXEC) != 0)
        return result;
    std::vector<std::string> copy = args;
    std::vector<char*> argv;
    for (auto& a : copy)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    const pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return result;
    }
    if (pid == 0) {
        const int devnull = open("/dev/null", O_RDONLY);
        dup2(devnull, 0);
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        execSearching(argv);
    }
    close(fds[1]);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeoutSeconds);
    char buf[4096];
    while (true) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            result.timedOut = true;
            kill(pid, SIGKILL);
            break;
        }
        pollfd p{fds[0], POLLIN, 0};
        const int r = poll(&p, 1, int(std::min<long long>(left.count(), 1000)));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            continue;
        const ssize_t n = read(fds[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        result.output.append(buf, size_t(n));
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    result.started = !(WIFEXITED(status) && WEXITSTATUS(status) == 127 && result.output.empty());
    return result;
}

std::string findOnPath(const std::string& name)
{
    const char* path = std::getenv("PATH");
    std::string rest = path ? path : "";
    while (!rest.empty()) {
        const auto colon = rest.find(':');
        const std::string candidate = rest.substr(0, colon) + "/" + name;
        if (access(candidate.c_str(), X_OK) == 0)
            return candidate;
        rest = colon == std::string::npos ? "" : rest.substr(colon + 1);
    }
    return {};
}

std::vector<std::string> environmentWith(const std::vector<std::string>& extra)
{
    auto name = [](const std::string& entry) { return entry.substr(0, entry.find('=')); };
    std::vector<std::string> env;
    for (char** e = environ; e && *e; ++e) {
        const std::string entry = *e;
        bool replaced = false;
        for (const auto& x : extra)
            replaced = replaced || name(x) == name(entry);
        if (!replaced)
            env.push_back(entry);
    }
    env.insert(env.end(), extra.begin(), extra.end());
    return env;
}

std::string firstLine(const std::string& text)
{
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos)
            end = text.size();
        std::string line = text.substr(start, end - start);
        const size_t a = line.find_first_not_of(" \t\r");
        if (a != std::string::npos)
            return line.substr(a, line.find_last_not_of(" \t\r") - a + 1);
        start = end + 1;
    }
    return {};
}

}  // namespace lengen::engine::sweep
