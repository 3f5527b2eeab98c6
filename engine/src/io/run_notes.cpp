// A run's notes and tags (issue 41): what a researcher writes about a run after the fact,
// stored as two root attributes of run.h5 beside, never inside, the training records. The
// writer lock decides who may write: a run that a process trains is in SWMR-write mode, where
// HDF5 allows no attribute changes, so its notes wait until it stops.

#include <algorithm>
#include <functional>
#include <memory>

#include "io/h5.h"
#include "io/writer_lock.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/run_file.h"

namespace lengen::engine {

namespace {

constexpr size_t kMaxNotesBytes = kMaxRunNotesBytes;  // well inside an attribute's 64 KiB
constexpr size_t kMaxTagBytes = 40;
constexpr size_t kMaxTags = 32;
constexpr double kNotesLockWaitSeconds = 10;

std::string trimmed(const std::string& s)
{
    const auto first = s.find_first_not_of(" \t\r\n");
    if (first == std::string::npos)
        return {};
    return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

}  // namespace

// Whether `s` is UTF-8 (the attributes are declared so; JSON, the index and `--json` need it).
bool validUtf8(const std::string& s)
{
    for (size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        const int n = c < 0x80           ? 0
                      : (c >> 5) == 0x6  ? 1
                      : (c >> 4) == 0xE  ? 2
                      : (c >> 3) == 0x1E ? 3
                                         : -1;
        if (n < 0 || i + size_t(n) >= s.size() + (n == 0 ? 1 : 0))
            return false;
        for (int k = 1; k <= n; ++k)
            if ((static_cast<unsigned char>(s[i + size_t(k)]) >> 6) != 0x2)
                return false;
        i += size_t(n) + 1;
    }
    return true;
}

RunNotes checkedRunNotes(const std::string& text, const std::vector<std::string>& tags)
{
    if (!validUtf8(text))
        throw Error(ErrorKind::Usage,
                    "the notes are not UTF-8 text (convert the file, e.g. iconv -t UTF-8)");
    for (const auto& t : tags)
        if (!validUtf8(t))
            throw Error(ErrorKind::Usage, "a tag is not UTF-8 text");
    RunNotes out;
    out.text = trimmed(text);
    if (out.text.size() > kMaxNotesBytes)
        throw Error(ErrorKind::Usage, "the notes are " + std::to_string(out.text.size()) +
                                          " bytes; a run keeps at most " +
                                          std::to_string(kMaxNotesBytes));
    for (const auto& raw : tags) {
        const auto tag = trimmed(raw);
        if (tag.empty())
            continue;
        if (tag.find_first_of(",\n\r\t") != std::string::npos)
            throw Error(ErrorKind::Usage,
                        "tag '" + tag +
                            "' holds a comma or a line break; a tag is one word or phrase");
        if (tag.size() > kMaxTagBytes)
            throw Error(ErrorKind::Usage, "tag '" + tag + "' is longer than " +
                                              std::to_string(kMaxTagBytes) + " bytes");
        if (std::find(out.tags.begin(), out.tags.end(), tag) == out.tags.end())
            out.tags.push_back(tag);
    }
    if (out.tags.size() > kMaxTags)
        throw Error(ErrorKind::Usage, std::to_string(out.tags.size()) +
                                          " tags; a run keeps at most " + std::to_string(kMaxTags));
    return out;
}

void editTags(RunNotes& notes, const std::vector<std::string>& add,
              const std::vector<std::string>& remove)
{
    for (const auto& typed : add)
        for (const auto& tag : splitTags(typed))
            if (std::find(notes.tags.begin(), notes.tags.end(), tag) == notes.tags.end())
                notes.tags.push_back(tag);
    for (const auto& typed : remove)
        for (const auto& tag : splitTags(typed))
            notes.tags.erase(std::remove(notes.tags.begin(), notes.tags.end(), tag),
                             notes.tags.end());
}

std::vector<std::string> splitTags(const std::string& joined)
{
    std::vector<std::string> tags;
    size_t start = 0;
    while (start <= joined.size()) {
        const auto comma = std::min(joined.find(',', start), joined.size());
        const auto tag = trimmed(joined.substr(start, comma - start));
        if (!tag.empty())
            tags.push_back(tag);
        start = comma + 1;
    }
    return tags;
}

void writeRunNotes(const std::string& pathOrDir, const RunNotes& notes)
{
    updateRunNotes(pathOrDir, [&](RunNotes& current) { current = notes; });
}

RunNotes updateRunNotes(const std::string& pathOrDir, const std::function<void(RunNotes&)>& edit)
{
    const auto path = locateRunFile(pathOrDir);
    // Another notes edit (a second `lengen note`, the studio's dialog) holds the lock for
    // milliseconds: wait for it, so that both edits land. A training holds it for its whole life.
    std::unique_ptr<io::WriterLock> lock;
    try {
        lock = std::make_unique<io::WriterLock>(path, io::LockRole::Notes, kNotesLockWaitSeconds);
    } catch (const Error& e) {
        if (e.kind() != ErrorKind::RunFile)
            throw;
        const auto holder = io::writerHolder(path);
        const auto by = holder.empty() ? std::string() : " (process " + holder + ")";
        if (io::writerRole(path) == io::LockRole::Notes)
            throw Error(ErrorKind::RunFile,
                        "the notes and tags of " + path + " are being changed by another edit" +
                            by + " for longer than " + std::to_string(int(kNotesLockWaitSeconds)) +
                            " s; try again");
        throw Error(ErrorKind::RunFile,
                    "the notes and tags of " + path + " cannot change while it trains" + by +
                        ": HDF5 allows no new attributes in a file being written; "
                        "change them once it stops");
    }
    // Read (a run file of ours, before anything is written), edited and written under the
    // lock: two processes adding a tag at once keep both. Read only now: before it, the other
    // edit's open for writing refuses this process's read ("unable to lock file").
    const auto now = readRunInfo(path);
    RunNotes notes{now.notes, now.tags};
    edit(notes);
    const auto checked = checkedRunNotes(notes.text, notes.tags);
    std::string joined;
    for (const auto& t : checked.tags)
        joined += (joined.empty() ? "" : ",") + t;
    io::H5Lock h5(io::h5Mutex());
    auto file = io::openFile(path, io::OpenMode::ReadWriteAfterCrash);
    io::writeAttribute(file.id(), "notes", checked.text, path);
    io::writeAttribute(file.id(), "tags", joined, path);
    if (H5Fflush(file.id(), H5F_SCOPE_LOCAL) < 0)
        throw Error(ErrorKind::Io, "cannot write the notes into " + path);
    return checked;
}

}  // namespace lengen::engine
