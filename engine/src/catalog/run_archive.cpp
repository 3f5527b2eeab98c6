// Moving runs to the trash or the archive and back (run_archive.h; issue 72).

#include "lengen/engine/run_archive.h"
#include "lengen/engine/run_index.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "clock_text.h"
#include "io/writer_lock.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/run_file.h"
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
// holds (its writer, the analysis store, a notes edit, an evaluation's or probes' marker).
// "" when nobody does.
std::string folderHolder(const fs::path& dir)
{
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.size() <= 5 || name.compare(name.size() - 5, 5, ".lock") != 0)
            continue;
        const std::string base = it->path().string().substr(0, it->path().string().size() - 5);
        if (io::writerAlive(base)) {
            const auto who = io::writerHolder(base);
            return (name == "run.h5.lock" ? "trained by " : "held by ") +
                   (who.empty() ? std::string("another process") : who) + " (" + name + ")";
        }
    }
    return {};
}

// "20261202-013405-4242": when the batch was made, and by which process (two at once differ).
std::string batchName() { return utcNow("%Y%m%d-%H%M%S") + "-" + std::to_string(::getpid()); }

// The run's folder for a run folder or its run.h5, refused when it holds no run.
fs::path runFolder(const std::string& run)
{
    return fs::absolute(fs::path(locateRunFile(run)).parent_path()).lexically_normal();
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
    const fs::path p = fs::absolute(path).lexically_normal();
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
