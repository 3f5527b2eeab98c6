#include "sweep/mps.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "file_tree.h"
#include "lengen/engine/errors.h"
#include "sweep/subprocess.h"

namespace lengen::engine {

namespace fs = std::filesystem;

namespace {

// Runs `exe args...` in a session of its own (a terminal's Ctrl-C, meant for the sweep, must not
// reach the daemon it starts), with `env` over this process's environment, stdin from `input`
// and its output to `logFile`. Waited for by pid, not by its output: the daemon it forks may
// keep that open. The exit code, or -1 when it did not start or did not end within `seconds`
// (then killed).
int runControl(const std::string& exe, const std::vector<std::string>& args,
               const std::vector<std::string>& env, const std::string& input,
               const std::string& logFile, int seconds)
{
    sweep::LoggedChild child;
    child.exe = exe;
    child.argv = {exe};
    child.argv.insert(child.argv.end(), args.begin(), args.end());
    child.extraEnv = env;
    child.stdinFile = input;
    child.logFile = logFile;
    child.newSession = true;
    pid_t pid = 0;
    if (sweep::spawnLogged(child, pid) != 0)
        return -1;
    int status = 0;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (::waitpid(pid, &status, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() > until) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &status, 0);
            return -1;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string tail(const std::string& file)
{
    std::ifstream in(file);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    return text.size() > 400 ? "…" + text.substr(text.size() - 400) : text;
}

}  // namespace

namespace sweep {

std::string findMpsControl() { return findOnPath("nvidia-cuda-mps-control"); }

MpsDaemon::MpsDaemon(const std::string& control) : m_control(control)
{
    // Short (the daemon's socket path must fit a sockaddr_un's 108 bytes) and fresh: mkdtemp
    // makes it, 0700, under a name no one else holds.
    std::string root = "/tmp/lengen-mps-XXXXXX";
    if (!::mkdtemp(root.data()))
        throw Error(ErrorKind::Io,
                    std::string("--mps: cannot create a folder in /tmp: ") + std::strerror(errno));
    m_root = root;
    m_pipe = m_root + "/pipe";
    m_log = m_root + "/log";
    std::error_code ec;
    fs::create_directories(m_pipe, ec);
    fs::create_directories(m_log, ec);
    m_env = {"CUDA_MPS_PIPE_DIRECTORY=" + m_pipe, "CUDA_MPS_LOG_DIRECTORY=" + m_log};
    const std::string out = m_root + "/control.out";
    const int code = ec ? -1 : runControl(m_control, {"-d"}, m_env, "/dev/null", out, 20);
    if (code != 0) {
        const std::string why = ec ? ec.message() : tail(m_log + "/control.log") + tail(out);
        removeTree(m_root);
        throw Error(ErrorKind::Runtime,
                    "--mps: " + m_control + " -d " +
                        (code < 0 ? "did not start or answer" : "exited " + std::to_string(code)) +
                        (why.empty() ? "" : ": " + why) + "; run the sweep without --mps");
    }
}

MpsDaemon::~MpsDaemon()
{
    // The command on stdin from a file: no pipe to die on (SIGPIPE) if the control is gone.
    const std::string quit = m_root + "/quit";
    std::ofstream(quit) << "quit\n";
    runControl(m_control, {}, m_env, quit, m_root + "/control.out", 20);
    removeTree(m_root);
}

}  // namespace sweep

}  // namespace lengen::engine
