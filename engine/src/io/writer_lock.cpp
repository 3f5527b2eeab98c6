#include "io/writer_lock.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "lengen/engine/errors.h"

namespace lengen::engine::io {

namespace {
// Open-file-description locks: like flock they belong to the open file and vanish when the
// holder closes it or dies, and unlike flock they can be queried without being taken.
bool ofdLock(int fd)
{
    struct flock fl = {};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    return ::fcntl(fd, F_OFD_SETLK, &fl) == 0;
}

// "<host>:<pid>" of this process, as a holder writes it.
std::string thisProcess()
{
    char host[256] = "";
    ::gethostname(host, sizeof host - 1);
    return std::string(host) + ":" + std::to_string(::getpid());
}
}  // namespace

WriterLock::WriterLock(const std::string& runFile, LockRole role, double waitSeconds)
    : m_path(runFile + ".lock")
{
    const auto start = std::chrono::steady_clock::now();
    for (int unlinked = 0;;) {
        m_fd = ::open(m_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (m_fd < 0)
            throw Error(ErrorKind::Io, "cannot create the lock file " + m_path);
        if (ofdLock(m_fd)) {
            // The holder before us unlinks its lock file as it lets go: a lock taken on that
            // unlinked file is no lock (a third process creates a new file and locks it too).
            struct stat mine = {}, named = {};
            const bool same = ::fstat(m_fd, &mine) == 0 && ::stat(m_path.c_str(), &named) == 0 &&
                              mine.st_ino == named.st_ino && mine.st_dev == named.st_dev;
            if (same || ++unlinked > 100)  // a file system that cannot say: the lock as taken
                break;
            ::close(m_fd);
            continue;
        }
        ::close(m_fd);
        m_fd = -1;
        // A notes edit waits for another notes edit, and for a holder that has not written its
        // line yet (it locks first, then writes who it is: an empty file is either).
        const bool waitable = role == LockRole::Notes && (writerHolder(runFile).empty() ||
                                                          writerRole(runFile) == LockRole::Notes);
        const double waited =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (!waitable || waited >= waitSeconds)
            throw Error(ErrorKind::RunFile,
                        "the run is being written by another process: " + runFile);
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    // Who holds it, for `lengen jobs` (the lock itself is what proves it alive), and what for.
    const std::string holder = thisProcess() + (role == LockRole::Notes ? " notes" : "") + "\n";
    if (::ftruncate(m_fd, 0) == 0)
        (void)!::pwrite(m_fd, holder.data(), holder.size(), 0);
}

WriterLock::~WriterLock()
{
    if (m_fd >= 0) {
        ::unlink(m_path.c_str());
        ::close(m_fd);
    }
}

bool writerAlive(const std::string& file)
{
    const std::string lockPath = file + ".lock";
    const int fd = ::open(lockPath.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    struct flock fl = {};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    const bool held = ::fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
    ::close(fd);
    return held;
}

namespace {
// The lock file's first line: "<host>:<pid>" and, for a notes edit, " notes".
std::string holderLine(const std::string& file)
{
    const int fd = ::open((file + ".lock").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return {};
    char buf[300] = {};
    const ssize_t n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    std::string text(buf, n > 0 ? size_t(n) : 0);
    if (const auto nl = text.find('\n'); nl != std::string::npos)
        text.resize(nl);
    return text;
}
}  // namespace

std::string writerHolder(const std::string& file)
{
    auto text = holderLine(file);
    if (const auto space = text.find(' '); space != std::string::npos)
        text.resize(space);
    return text;
}

LockRole writerRole(const std::string& file)
{
    const auto text = holderLine(file);
    const auto space = text.find(' ');
    return space != std::string::npos && text.substr(space + 1) == "notes" ? LockRole::Notes
                                                                           : LockRole::Writer;
}

bool writerElsewhere(const std::string& file)
{
    // Alive first: a holder that died left its line behind.
    return writerAlive(file) && writerHolder(file) != thisProcess();
}

}  // namespace lengen::engine::io
