// jobs.json and the cancel marks (job_record.h).

#include "sweep/job_record.h"

#include <fcntl.h>
#include <nlohmann/json.hpp>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <filesystem>

#include "clock_text.h"
#include "lengen/engine/errors.h"
#include "text_files.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace lengen::engine::sweep {

namespace {

constexpr std::uintmax_t kMaxRecordBytes = 16u << 20;

// Entries of one file; `legacy`: slurm/submitted.json, whose entries are Slurm's.
void readFile(const std::string& file, bool legacy, std::vector<Submission>& out, std::string* note)
{
    if (!fs::exists(file))
        return;
    try {
        const json all = json::parse(readTextFile(file, kMaxRecordBytes));
        if (!all.is_array())
            throw std::runtime_error("not a JSON array");
        for (const auto& e : all) {
            if (!e.is_object() || !e.contains("job_id") || !e["job_id"].is_string())
                continue;
            Submission s;
            s.executor = legacy ? "slurm" : e.value("executor", "");
            s.jobId = e["job_id"].get<std::string>();
            if (e.contains("cells") && e["cells"].is_array())
                for (const auto& c : e["cells"])
                    if (c.is_number_integer())
                        s.cells.push_back(c.get<int>());
            s.submittedAt = e.value("submitted_at", "");
            s.host = e.value("host", "");
            s.pid = e.value("pid", std::int64_t(0));
            s.endedAt = e.value("ended_at", "");
            out.push_back(std::move(s));
        }
    } catch (const std::exception& e) {
        if (note)
            *note = file + " is damaged (" + e.what() + "); its jobs are not shown";
    }
}

// An exclusive flock on jobs.json.lock for the read-modify-write of jobs.json.
class RecordLock {
public:
    explicit RecordLock(const std::string& root)
    {
        m_fd = ::open((root + "/jobs.json.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (m_fd >= 0)
            ::flock(m_fd, LOCK_EX);  // without it (read-only folder) the write below says why
    }
    ~RecordLock()
    {
        if (m_fd >= 0)
            ::close(m_fd);
    }
    RecordLock(const RecordLock&) = delete;
    RecordLock& operator=(const RecordLock&) = delete;

private:
    int m_fd = -1;
};

void writeRecords(const std::string& root, const std::vector<Submission>& all)
{
    json out = json::array();
    for (const auto& e : all) {
        json entry = {{"executor", e.executor},        {"job_id", e.jobId}, {"cells", e.cells},
                      {"submitted_at", e.submittedAt}, {"host", e.host},    {"pid", e.pid}};
        if (!e.endedAt.empty())
            entry["ended_at"] = e.endedAt;
        out.push_back(std::move(entry));
    }
    writeFileAtomically(root + "/jobs.json", out.dump(1) + "\n");
}

}  // namespace

std::string absoluteRoot(const std::string& dir)
{
    fs::path root = fs::absolute(locateSweep(dir)).lexically_normal();
    if (root.filename().empty())
        root = root.parent_path();
    return root.string();
}

std::string hostName()
{
    char name[256] = {};
    return gethostname(name, sizeof name - 1) == 0 ? name : "";
}

bool processAlive(const std::string& host, std::int64_t pid)
{
    if (pid <= 0)
        return false;
    if (host != hostName())
        return true;  // another node (a Slurm task): trust the file; the scheduler says more
    return ::kill(pid_t(pid), 0) == 0 || errno == EPERM;
}

std::vector<Submission> readSubmissions(const std::string& root, std::string* note)
{
    std::vector<Submission> out;
    readFile(root + "/slurm/submitted.json", true, out, note);
    readFile(root + "/jobs.json", false, out, note);
    return out;
}

void recordSubmission(const std::string& root, Submission s)
{
    if (s.submittedAt.empty())
        s.submittedAt = utcNow();
    if (s.host.empty())
        s.host = hostName();
    if (!s.pid)
        s.pid = ::getpid();
    const RecordLock lock(root);
    std::vector<Submission> all;
    readFile(root + "/jobs.json", false, all, nullptr);
    all.push_back(std::move(s));
    writeRecords(root, all);
}

void markSubmissionEnded(const std::string& root, const std::string& jobId) noexcept
{
    try {
        const RecordLock lock(root);
        std::vector<Submission> all;
        readFile(root + "/jobs.json", false, all, nullptr);
        bool changed = false;
        for (auto& e : all)
            if (e.jobId == jobId && e.endedAt.empty()) {
                e.endedAt = utcNow();
                changed = true;
            }
        if (changed)
            writeRecords(root, all);
    } catch (const std::exception&) {
        // A folder that cannot be written: the pid check still ends the record with the process.
    }
}

const Submission* latestFor(const std::vector<Submission>& all, int cell)
{
    for (auto it = all.rbegin(); it != all.rend(); ++it)
        for (int c : it->cells)
            if (c == cell)
                return &*it;
    return nullptr;
}

std::string cancelMarkPath(const SweepPaths& paths, const std::string& cell)
{
    return paths.cellDir(cell) + "/cancel.json";
}

bool cancelMarked(const SweepPaths& paths, const std::string& cell)
{
    return fs::exists(cancelMarkPath(paths, cell));
}

void markCancelled(const SweepPaths& paths, const std::string& cell, const std::string& by)
{
    fs::create_directories(paths.cellDir(cell));
    const json doc = {{"cancelled_at", utcNow()}, {"by", by}};
    writeFileAtomically(cancelMarkPath(paths, cell), doc.dump(1) + "\n");
}

void clearCancelMark(const SweepPaths& paths, const std::string& cell,
                     std::chrono::system_clock::time_point takenAt)
{
    std::error_code ec;
    const auto mark = cancelMarkPath(paths, cell);
    const auto written = fs::last_write_time(mark, ec);
    if (ec)
        return;
    // The file clock as the system clock (C++17 has no clock_cast): both read now.
    const auto asSystem = std::chrono::system_clock::now() +
                          std::chrono::duration_cast<std::chrono::system_clock::duration>(
                              written - fs::file_time_type::clock::now());
    // Both clocks tick coarsely (the kernel stamps files at its timer tick; the launcher reads the
    // same clock): a mark of the same tick as the run's start is the user's cancel, and holds.
    if (asSystem + std::chrono::milliseconds(1) < takenAt)
        fs::remove(mark, ec);
}

}  // namespace lengen::engine::sweep
