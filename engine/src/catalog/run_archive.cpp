// Moving runs to the trash or the archive and back (run_archive.h; issue 72).

#include "lengen/engine/run_archive.h"
#include "lengen/engine/run_index.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "clock_text.h"
#include "io/writer_lock.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/jobs.h"
#include "lengen/engine/run_file.h"
#include "sweep/subprocess.h"
#include "train/memory_estimate.h"

namespace fs = std::filesystem;

namespace lengen::engine {

namespace {

constexpr const char* kTrash = kTrashFolder;
constexpr const char* kArchive = kArchiveFolder;

// Bytes of the regular files under a run's folder (what the confirmation says).
std::uint64_t folderBytes(const fs::path& dir)
{
    std::uint64_t total = 0;
    std::error_code ec;
    for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        std::error_code entry;
        if (it->is_regular_file(entry))
            total += it->file_size(entry);
    }
    return total;
}

// Who holds something in the run's folder: every "<file>.lock" there whose lock a live process
// holds (its writer, the analysis store, a notes edit, an evaluation's or probes' marker), as
// "<what> by <host>:<pid>" naming the command's kind of work ("(this process)" after our own,
// which a front end names as itself: the studio's "this studio is evaluating it"). "" when
// nobody does.
std::string folderHolder(const fs::path& dir)
{
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.size() <= 5 || name.compare(name.size() - 5, 5, ".lock") != 0)
            continue;
        const std::string base = it->path().string().substr(0, it->path().string().size() - 5);
        if (!io::writerAlive(base))
            continue;
        auto who = io::writerHolder(base);
        who = who.empty() ? "another process" : who == thisHolder() ? who + " (this process)" : who;
        std::string what = "held by " + who;
        if (name == "run.h5.lock")
            what = io::writerRole(base) == io::LockRole::Notes
                       ? "its notes are being edited by " + who + " (lengen note or a studio)"
                       : "trained by " + who;
        else if (const std::string job = ".lengen-job-"; name.rfind(job, 0) == 0) {
            // .lengen-job-<kind>-<pid>-<n>.lock (jobs_scan.cpp): "evaluation", "probes", ...
            std::string kind = name.substr(job.size(), name.find('-', job.size()) - job.size());
            std::replace(kind.begin(), kind.end(), '_', ' ');
            const bool vowel =
                !kind.empty() && std::string("aeiou").find(kind[0]) != std::string::npos;
            what = "in use by " +
                   (kind.empty() ? std::string("a")
                    : vowel      ? "an "
                                 : "a ") +
                   kind + (kind.empty() ? "" : " ") + "job of " + who;
        }
        return what + " (" + name + ")";
    }
    return {};
}

// "20261202-013405-4242": when the batch was made, and by which process (two at once differ).
std::string batchName() { return utcNow("%Y%m%d-%H%M%S") + "-" + std::to_string(::getpid()); }

// What a path is, for a refusal's sentence.
std::string kindOf(const fs::file_status& st)
{
    switch (st.type()) {
    case fs::file_type::directory: return "a folder";
    case fs::file_type::fifo: return "a FIFO";
    case fs::file_type::block:
    case fs::file_type::character: return "a device";
    case fs::file_type::socket: return "a socket";
    case fs::file_type::symlink: return "a symbolic link";
    case fs::file_type::regular: return "a file";
    default: return "not a file or folder";
    }
}

// Why the file named as a run is none ("" when it is one). A damaged run file (HDF5 that does
// not open: truncated, killed while created) is still its run's: moving it is how a user clears
// it away, but only under the name every run file has, so no HDF5 file of another program moves
// the folder around it.
std::string notARun(const fs::path& file)
{
    switch (probeRunFile(file.string())) {
    case RunFileProbe::Run: return {};
    case RunFileProbe::Damaged:
        return file.filename() == "run.h5" ? std::string()
                                           : "an HDF5 file that does not open as a LenGen run";
    case RunFileProbe::Foreign: return "an HDF5 file that is not a LenGen run";
    case RunFileProbe::NotHdf5: return "not an HDF5 file, so not a run";
    case RunFileProbe::NotRegular: return kindOf(fs::status(file)) + ", not a run file";
    case RunFileProbe::Missing: break;
    }
    return "no run file";
}

// The run's folder for a run folder or its run file: exactly what moves (issue 81: a text file
// beside a run moved the folder holding both). Refused with Error(RunFile) naming the path and
// what it is before anything moves: a path that is no run or no run's folder, a symbolic link
// (the run would stay and only the link move), a run.h5 that is not a run file. Relative paths
// are taken from the working folder.
fs::path runFolder(const std::string& run)
{
    if (run.empty())
        throw Error(ErrorKind::Usage, "an empty path names no run");
    fs::path p = fs::absolute(run).lexically_normal();
    if (!p.has_filename() && p.has_relative_path())  // "runs/r1/" -> "runs/r1"
        p = p.parent_path();
    std::error_code ec;
    const auto st = fs::symlink_status(p, ec);
    if (ec || !fs::exists(st))
        throw Error(ErrorKind::RunFile, run + ": no such file or folder");
    if (fs::is_symlink(st))
        throw Error(ErrorKind::RunFile, run + " is a symbolic link (to " +
                                            fs::read_symlink(p, ec).string() +
                                            "); name the run's own folder: only a link would move");
    fs::path dir = p, file = p / "run.h5";
    if (fs::is_regular_file(st))
        dir = p.parent_path(), file = p;
    else if (!fs::is_directory(st))
        throw Error(ErrorKind::RunFile, run + " is " + kindOf(st) + ", not a run");
    if (!dir.has_relative_path())  // a run file at "/": no parent to hold a trash
        throw Error(ErrorKind::RunFile, run + ": a file system's root is not a run's folder");
    const auto fileSt = fs::symlink_status(file, ec);
    if (fs::is_directory(st) && !fs::exists(fileSt))
        throw Error(ErrorKind::RunFile, run + " is a folder that holds no run (no run.h5)");
    if (fs::is_symlink(fileSt))
        throw Error(ErrorKind::RunFile, file.string() + " is a symbolic link, not a run file");
    if (const auto why = notARun(file); !why.empty())
        throw Error(ErrorKind::RunFile, (file == p ? run : file.string()) + " is " + why);
    return dir;
}

void renameChecked(const RunMove& m)
{
    std::error_code ec;
    if (fs::exists(m.to, ec))
        throw Error(ErrorKind::Io, "cannot move " + m.from + ": " + m.to + " exists");
    fs::create_directories(fs::path(m.to).parent_path(), ec);
    fs::rename(m.from, m.to, ec);
    if (ec)
        throw Error(ErrorKind::Io, "cannot move " + m.from + " to " + m.to + ": " + ec.message());
}

}  // namespace

RemovalPlan planRunRemoval(const std::vector<std::string>& runs, RunRemoval kind)
{
    RemovalPlan plan;
    plan.kind = kind;
    const std::string batch = batchName();
    for (const auto& run : runs) {
        const fs::path dir = runFolder(run);
        for (const auto& m : plan.moves)
            if (m.from == dir.string())
                throw Error(ErrorKind::Usage, dir.string() + " is named twice");
        if (const auto who = folderHolder(dir); !who.empty())
            throw Error(ErrorKind::RunFile, dir.string() + ": " + who +
                                                "; stop it first (lengen stop, or wait for it)");
        // A sweep's cell is the sweep's: moving it alone would leave the sweep without its
        // cell's config and state (found under Xvfb: the menu offered it).
        std::error_code ec;
        if (fs::exists(dir / "cell.json", ec) ||
            fs::exists(dir.parent_path().parent_path() / "sweep.yaml", ec))
            throw Error(ErrorKind::RunFile,
                        dir.string() + ": a cell of the sweep " +
                            dir.parent_path().parent_path().string() +
                            " (its run belongs to the sweep: move the sweep's folder instead)");
        const fs::path parent = dir.parent_path();
        RunMove m;
        m.from = dir.string();
        m.to = (kind == RunRemoval::Trash ? parent / kTrash / batch / dir.filename()
                                          : parent / kArchive / dir.filename())
                   .string();
        m.bytes = folderBytes(dir);
        plan.bytes += m.bytes;
        plan.moves.push_back(std::move(m));
    }
    plan.sizeText = training::bytesText(double(plan.bytes));
    return plan;
}

std::vector<RunMove> carryOutRemoval(const RemovalPlan& plan)
{
    std::vector<RunMove> done;
    for (const auto& m : plan.moves) {
        try {
            if (const auto who = folderHolder(m.from); !who.empty())
                throw Error(ErrorKind::RunFile, m.from + ": " + who);
            renameChecked(m);
        } catch (const Error& e) {
            std::string moved;
            for (const auto& d : done)
                moved += (moved.empty() ? "" : ", ") + d.from;
            throw Error(e.kind(), std::string(e.what()) +
                                      (moved.empty() ? "" : " (moved before it: " + moved + ")"));
        }
        done.push_back(m);
    }
    return done;
}

std::string restoreCommand(const std::vector<RunMove>& moved, RunRemoval kind)
{
    std::vector<std::string> args;
    for (const auto& m : moved) {
        const auto arg = kind == RunRemoval::Trash ? fs::path(m.to).parent_path().string() : m.to;
        if (std::find(args.begin(), args.end(), arg) == args.end())
            args.push_back(arg);
    }
    std::string line = "lengen restore";
    for (const auto& a : args)
        line += " " + sweep::shellWord(a);
    return line;
}

namespace {

// A trash or archive folder that holds nothing now but the runs index a listing of it wrote
// (a cache): removed, so no empty folder stays beside the runs after the last run went back.
void removeIfOnlyAnIndex(const fs::path& dir)
{
    std::error_code ec;
    const fs::path index = runIndexFileFor(dir.string());
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        if (it->path() != index)
            return;
    fs::remove(index, ec);
    fs::remove(dir, ec);
}

}  // namespace

std::vector<RunMove> restoreRuns(const std::string& path)
{
    if (path.empty())
        throw Error(ErrorKind::Usage, "an empty path names nothing to restore");
    fs::path p = fs::absolute(path).lexically_normal();
    if (!p.has_filename() && p.has_relative_path())  // ".lengen-trash/<when>/"
        p = p.parent_path();
    std::vector<fs::path> dirs;  // run folders to put back
    fs::path home;               // where they go
    std::error_code ec;
    if (p.parent_path().filename() == kTrash) {  // a whole batch
        home = p.parent_path().parent_path();
        for (fs::directory_iterator it(p, ec), end; !ec && it != end; it.increment(ec))
            if (it->is_directory() && fs::exists(it->path() / "run.h5"))
                dirs.push_back(it->path());
    } else if (p.parent_path().parent_path().filename() == kTrash) {
        home = p.parent_path().parent_path().parent_path();
        dirs.push_back(p);
    } else if (p.parent_path().filename() == kArchive) {
        home = p.parent_path().parent_path();
        dirs.push_back(p);
    }
    if (home.empty() || dirs.empty())
        throw Error(ErrorKind::Usage,
                    path + " is not in a trash or an archive (give a run folder under "
                           ".lengen-trash/<when>/ or .lengen-archive/, or a .lengen-trash/<when> "
                           "folder)");
    std::sort(dirs.begin(), dirs.end());
    std::vector<RunMove> done;
    for (const auto& d : dirs) {
        RunMove m{d.string(), (home / d.filename()).string(), 0};  // no caller sizes a restore
        renameChecked(m);
        done.push_back(std::move(m));
    }
    // The batch's folder, then the trash or archive itself, once empty (each kept while anything
    // else is in it: fs::remove does not remove a folder that holds something).
    if (p.parent_path().filename() == kTrash)
        fs::remove(p, ec);
    else if (p.parent_path().parent_path().filename() == kTrash)
        fs::remove(p.parent_path(), ec);
    removeIfOnlyAnIndex(home / kTrash);
    removeIfOnlyAnIndex(home / kArchive);
    return done;
}

}  // namespace lengen::engine
