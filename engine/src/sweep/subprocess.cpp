// runCommand: fork + exec with one pipe for stdout and stderr, read with poll() so the time
// limit holds even when the program prints nothing.

#include "sweep/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
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

// This process's environment with `extra` ("NAME=value" each) set over it, for a child's envp:
// a child gets variables without this process changing its own (setenv is not thread-safe,
// and a user's own values must survive).
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
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(timeoutSeconds);
    char buf[4096];
    while (true) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
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

int spawnLogged(const LoggedChild& child, pid_t& pid)
{
    std::vector<std::string> args = child.argv, env = environmentWith(child.extraEnv);
    std::vector<char*> argv, envp;
    for (auto& a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    for (auto& e : env)
        envp.push_back(e.data());
    envp.push_back(nullptr);
    posix_spawn_file_actions_t files;
    posix_spawn_file_actions_init(&files);
    posix_spawn_file_actions_addopen(&files, 0, child.stdinFile.c_str(), O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&files, 1, child.logFile.c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&files, 1, 2);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGINT);
    sigaddset(&defaults, SIGTERM);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
    if (child.newSession) {
        flags |= POSIX_SPAWN_SETSID;
    } else {
        posix_spawnattr_setpgroup(&attr, 0);
        flags |= POSIX_SPAWN_SETPGROUP;
    }
    posix_spawnattr_setflags(&attr, flags);
    const int rc = posix_spawn(&pid, child.exe.c_str(), &files, &attr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&files);
    posix_spawnattr_destroy(&attr);
    return rc;
}

std::string shellWord(const std::string& s)
{
    if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                          "0123456789/._-+:@%,=") == std::string::npos)
        return s;
    std::string out = "'";
    for (char c : s)
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
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
