#include "io/h5.h"
#include "io/h5_internal.h"
#include "io/writer_lock.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

namespace lengen::engine::io {

namespace {
constexpr unsigned kSwmrReadAttempts = 8;
// How long a reader waits for another process's writer to let go of HDF5's file lock (openFile):
// a writer's open-to-SWMR moment is milliseconds, longer on a loaded machine.
constexpr auto kLockedFileWait = std::chrono::seconds(3);

// What a message calls the file: "cannot create the run file" was said of attention_maps.h5.
std::string fileNoun(const std::string& path)
{
    const auto slash = path.find_last_of('/');
    std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
    if (name.size() > 8 && name.compare(name.size() - 8, 8, ".partial") == 0)
        name.resize(name.size() - 8);
    if (name == "run.h5")
        return "run file";
    if (name == "analysis.h5")
        return "analysis file";
    if (name == "attention_maps.h5")
        return "attention map file";
    if (name == "aggregate.h5")
        return "sweep aggregate file";
    return "file";
}

// HDF5 closes what is still open in an atexit handler; a file whose close already failed (a
// full disk) made that handler crash, turning a clean "disk full" exit 4 into SIGSEGV. Every
// handle here is closed explicitly, so the handler is not needed. Must run before HDF5
// initialises itself, hence a static initialiser.
const bool g_noAtExit = [] {
    H5dont_atexit();
    return true;
}();
}  // namespace

std::recursive_mutex& h5Mutex()
{
    // HDF5 prints its error stack to stderr by default; we report errors ourselves. Debian's
    // build is thread-safe, which makes that switch per thread: every thread that takes the
    // lock (the studio's GUI thread and its worker) silences itself once. A process-wide
    // "once" left the second thread printing stacks (issue 29).
    static std::recursive_mutex mutex;
    thread_local const bool silenced = [] {
        const std::lock_guard<std::recursive_mutex> lock(
            mutex);  // HDF5 builds without thread-safety
        H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
        return true;
    }();
    (void)silenced;
    return mutex;
}

H5Handle& H5Handle::operator=(H5Handle&& o) noexcept
{
    if (this != &o) {
        reset();
        m_id = o.m_id;
        m_close = o.m_close;
        o.m_id = -1;
    }
    return *this;
}

void H5Handle::reset()
{
    if (m_id >= 0 && m_close) {
        // Handles are often destroyed after a caller's own lock went out of scope (declared
        // before it); closing is an HDF5 call like any other and must hold the lock.
        H5Lock lock(h5Mutex());
        m_close(m_id);
    }
    m_id = -1;
}

namespace {

struct Messages {
    std::string innermost;
    std::string stack;
};

herr_t collectMessage(unsigned n, const H5E_error2_t* err, void* data)
{
    auto* out = static_cast<Messages*>(data);
    if (!err || !err->desc)
        return 0;
    if (n == 0)  // walking downward: entry 0 is the innermost, most specific one
        out->innermost = err->desc;
    out->stack += std::string(out->stack.empty() ? "" : " <- ") + err->func_name + ": " + err->desc;
    return 0;
}

}  // namespace

namespace {
// The error stack of the failed call, taken before any other HDF5 call clears it.
Messages takeMessages()
{
    Messages m;
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, collectMessage, &m);
    H5Eclear2(H5E_DEFAULT);
    return m;
}

[[noreturn]] void throwWith(const Messages& m, ErrorKind kind, const std::string& what,
                            const std::string& path)
{
    throw Error(kind, what + " (" + path + ")" + (m.innermost.empty() ? "" : ": " + m.innermost),
                "HDF5 " + std::to_string(H5_VERS_MAJOR) + "." + std::to_string(H5_VERS_MINOR) +
                    "." + std::to_string(H5_VERS_RELEASE) +
                    (m.stack.empty() ? "" : ": " + m.stack));
}
}  // namespace

void throwH5(ErrorKind kind, const std::string& what, const std::string& path)
{
    throwWith(takeMessages(), kind, what, path);
}

H5Handle openFile(const std::string& path, OpenMode mode)
{
    // A FIFO or a device would block the first read (H5Fis_hdf5 reads the superblock) forever;
    // a folder has nothing to read.
    struct stat st = {};
    if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
        throw Error(ErrorKind::RunFile, path + " is not a regular file (" +
                                            (S_ISDIR(st.st_mode)    ? "a folder"
                                             : S_ISFIFO(st.st_mode) ? "a FIFO"
                                                                    : "a device or socket") +
                                            "): not a run or analysis file");
    const H5Lock lock(h5Mutex());
    if (H5Fis_hdf5(path.c_str()) <= 0) {
        H5Eclear2(H5E_DEFAULT);
        FILE* probe = std::fopen(path.c_str(), "rb");
        if (!probe)
            throw Error(ErrorKind::RunFile, fileNoun(path) + " not found: " + path);
        std::fclose(probe);
        throw Error(ErrorKind::RunFile, "not an HDF5 file (damaged or foreign): " + path);
    }
    H5Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
    H5Pset_libver_bounds(fapl.id(), H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
    // A SWMR reader re-reads metadata whose checksum fails, in case the writer was midway;
    // HDF5's default of 100 attempts with growing sleeps per object made a damaged file look
    // like a hang (minutes). A live writer's metadata settles within a few attempts.
    H5Pset_metadata_read_attempts(fapl.id(), kSwmrReadAttempts);
    const unsigned flags = mode == OpenMode::ReadSwmr   ? (H5F_ACC_RDONLY | H5F_ACC_SWMR_READ)
                           : mode == OpenMode::ReadOnly ? H5F_ACC_RDONLY
                                                        : H5F_ACC_RDWR;
    if (mode == OpenMode::ReadWriteAfterCrash) {
        // The file-access property h5clear uses; settable by name through the public H5Pset.
        hbool_t clear = true;
        if (H5Pexist(fapl.id(), "clear_status_flags") > 0)
            H5Pset(fapl.id(), "clear_status_flags", &clear);
        H5Eclear2(H5E_DEFAULT);
    }
    hid_t id = H5Fopen(path.c_str(), flags, fapl.id());
    // Another process's writer holds a file open for writing without SWMR for moments: a run's
    // writer between creating or reopening it and its switch to SWMR-write (run_writer.cpp), a
    // notes edit while it writes. A reader then meets HDF5's file lock ("unable to lock file",
    // EAGAIN): `sweep cancel` took a cell just started for a failed one. Wait that out while
    // that writer lives (the h5 mutex stays held: this thread's caller may hold it already).
    const bool reading = mode == OpenMode::ReadSwmr || mode == OpenMode::ReadOnly;
    const auto until = std::chrono::steady_clock::now() + kLockedFileWait;
    while (id < 0 && reading) {
        const Messages m = takeMessages();
        if (m.stack.find("unable to lock file") == std::string::npos || !writerElsewhere(path) ||
            std::chrono::steady_clock::now() > until) {
            // A writer killed between opening the file for writing and its switch to SWMR
            // (a resume's first moments) leaves it flagged open for writing: say what happened
            // and what repairs it rather than HDF5's words alone (issue 81 item 10).
            if (m.stack.find("not already open for SWMR writing") != std::string::npos &&
                !writerAlive(path))
                throwWith(m, ErrorKind::RunFile,
                          "the " + fileNoun(path) +
                              " was left open for writing by a training killed as it opened "
                              "it, before a step of that session; `lengen train --resume` "
                              "repairs it (nothing trained is lost), `lengen delete` clears it",
                          path);
            throwWith(m, ErrorKind::RunFile, "cannot open the " + fileNoun(path), path);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        id = H5Fopen(path.c_str(), flags, fapl.id());
    }
    if (id < 0)
        throwH5(ErrorKind::RunFile, "cannot open the " + fileNoun(path), path);
    return H5Handle(id, H5Fclose);
}

H5Handle createFile(const std::string& path)
{
    const H5Lock lock(h5Mutex());
    H5Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
    H5Pset_libver_bounds(fapl.id(), H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
    hid_t id = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.id());
    if (id < 0)
        throwH5(ErrorKind::Io, "cannot create the " + fileNoun(path), path);
    return H5Handle(id, H5Fclose);
}

H5Handle createGroup(hid_t loc, const std::string& name, const std::string& path)
{
    const H5Lock lock(h5Mutex());
    hid_t id = H5Gcreate2(loc, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    check(id, ErrorKind::Io, "cannot create group " + name, path);
    return H5Handle(id, H5Gclose);
}

namespace {
// "missing dataset" was said of one whose object header is damaged: name it by its full path
// ("/checkpoint/slot0/model/input.weight") and keep HDF5's reason (doesn't exist, checksum).
[[noreturn]] void throwOpenFailure(const char* what, hid_t loc, const std::string& name,
                                   const std::string& path)
{
    const Messages m = takeMessages();  // first: the calls below clear the stack
    const std::string parent = objectName(loc);
    const std::string full = (parent.empty() || parent == "/" ? "/" : parent + "/") + name;
    throwWith(m, ErrorKind::RunFile,
              std::string("cannot open ") + what + " '" + full + "' in the " + fileNoun(path),
              path);
}
}  // namespace

H5Handle openGroup(hid_t loc, const std::string& name, const std::string& path)
{
    const H5Lock lock(h5Mutex());
    hid_t id = H5Gopen2(loc, name.c_str(), H5P_DEFAULT);
    if (id < 0)
        throwOpenFailure("group", loc, name, path);
    return H5Handle(id, H5Gclose);
}

H5Handle openDataset(hid_t loc, const std::string& name, const std::string& path)
{
    const H5Lock lock(h5Mutex());
    hid_t id = H5Dopen2(loc, name.c_str(), H5P_DEFAULT);
    if (id < 0)
        throwOpenFailure("dataset", loc, name, path);
    return H5Handle(id, H5Dclose);
}

bool exists(hid_t loc, const std::string& name)
{
    const H5Lock lock(h5Mutex());
    const htri_t r = H5Lexists(loc, name.c_str(), H5P_DEFAULT);
    if (r < 0)
        H5Eclear2(H5E_DEFAULT);
    return r > 0;
}

H5Handle createDataset(hid_t loc, const std::string& name, hid_t type,
                       const std::vector<hsize_t>& dims, const std::string& path)
{
    const H5Lock lock(h5Mutex());
    H5Handle space(dims.empty()
                       ? H5Screate(H5S_SCALAR)
                       : H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
                   H5Sclose);
    hid_t id =
        H5Dcreate2(loc, name.c_str(), type, space.id(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    check(id, ErrorKind::Io, "cannot create dataset " + name, path);
    return H5Handle(id, H5Dclose);
}

H5Handle createLog(hid_t loc, const std::string& name, hid_t type,
                   const std::vector<hsize_t>& rowDims, hsize_t chunkRows, const void* fill,
                   const std::string& path)
{
    const H5Lock lock(h5Mutex());
    // Chunks stay near 1 MiB whatever the row width (HDF5 refuses chunks of 4 GiB and more, and
    // a row of 10^9 points is a valid config): wide rows get one row per chunk, split columns.
    constexpr hsize_t kChunkValues = 262'144;
    std::vector<hsize_t> dims{0}, maxDims{H5S_UNLIMITED}, chunk{chunkRows};
    hsize_t perRow = 1;
    for (hsize_t d : rowDims) {
        dims.push_back(d);
        maxDims.push_back(d);
        chunk.push_back(std::max<hsize_t>(1, std::min(d, kChunkValues)));
        perRow *= chunk.back();
    }
    chunk[0] = std::max<hsize_t>(1, std::min(chunkRows, kChunkValues / perRow));
    H5Handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), maxDims.data()),
                   H5Sclose);
    H5Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
    H5Pset_chunk(dcpl.id(), static_cast<int>(chunk.size()), chunk.data());
    if (fill)
        H5Pset_fill_value(dcpl.id(), type, fill);
    hid_t id = H5Dcreate2(loc, name.c_str(), type, space.id(), H5P_DEFAULT, dcpl.id(), H5P_DEFAULT);
    check(id, ErrorKind::Io, "cannot create dataset " + name, path);
    return H5Handle(id, H5Dclose);
}

std::vector<hsize_t> datasetShape(hid_t ds)
{
    const H5Lock lock(h5Mutex());
    H5Handle space(H5Dget_space(ds), H5Sclose);
    const int rank = H5Sget_simple_extent_ndims(space.id());
    std::vector<hsize_t> dims(static_cast<size_t>(std::max(rank, 0)));
    if (rank > 0)
        H5Sget_simple_extent_dims(space.id(), dims.data(), nullptr);
    return dims;
}

std::uint64_t storedBytes(hid_t ds)
{
    const H5Lock lock(h5Mutex());
    return H5Dget_storage_size(ds);
}

std::string objectName(hid_t obj)
{
    const H5Lock lock(h5Mutex());
    char buf[512] = {};
    const ssize_t n = H5Iget_name(obj, buf, sizeof buf);
    if (n <= 0) {
        H5Eclear2(H5E_DEFAULT);
        return "?";
    }
    return std::string(buf, static_cast<size_t>(std::min<ssize_t>(n, sizeof buf - 1)));
}

namespace {
std::string shapeText(const std::vector<hsize_t>& dims)
{
    if (dims.empty())
        return "a scalar";
    std::string text = "shape [";
    for (size_t i = 0; i < dims.size(); ++i)
        text += (i ? ", " : "") + std::to_string(dims[i]);
    return text + "]";
}
}  // namespace

std::vector<hsize_t> shapeOf(hid_t ds, int rank, const std::string& path)
{
    const H5Lock lock(h5Mutex());
    H5Handle space(H5Dget_space(ds), H5Sclose);
    if (!space.valid() || H5Sget_simple_extent_ndims(space.id()) < 0)
        throwH5(ErrorKind::RunFile, "cannot read the shape of dataset '" + objectName(ds) + "'",
                path);
    auto dims = datasetShape(ds);
    if (static_cast<int>(dims.size()) != rank)
        throw Error(ErrorKind::RunFile,
                    "dataset '" + objectName(ds) + "' in " + path + " should be " +
                        (rank == 0 ? std::string("a scalar") : std::to_string(rank) + "-D") +
                        ", found " + shapeText(dims) + " (damaged or foreign file)");
    return dims;
}

void writeAll(hid_t ds, hid_t memType, const void* data, size_t elements, const std::string& path)
{
    const H5Lock lock(h5Mutex());
    H5Handle space(H5Dget_space(ds), H5Sclose);
    const hssize_t n = space.valid() ? H5Sget_simple_extent_npoints(space.id()) : -1;
    if (n < 0 || static_cast<size_t>(n) != elements)
        throw Error(ErrorKind::RunFile, "dataset '" + objectName(ds) + "' in " + path +
                                            " does not have the shape this run needs (damaged "
                                            "or foreign file)");
    check(H5Dwrite(ds, memType, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), ErrorKind::Io,
          "cannot write dataset", path);
}

void readAll(hid_t ds, hid_t memType, void* data, size_t elements, const std::string& path)
{
    const H5Lock lock(h5Mutex());
    H5Handle space(H5Dget_space(ds), H5Sclose);
    const hssize_t n = space.valid() ? H5Sget_simple_extent_npoints(space.id()) : -1;
    if (n < 0)
        throwH5(ErrorKind::RunFile, "cannot read the shape of dataset '" + objectName(ds) + "'",
                path);
    if (static_cast<size_t>(n) != elements)
        throw Error(ErrorKind::RunFile, "dataset '" + objectName(ds) + "' in " + path + " holds " +
                                            std::to_string(n) + " values where " +
                                            std::to_string(elements) +
                                            " belong (damaged or foreign file)");
    if (elements == 0)
        return;
    check(H5Dread(ds, memType, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), ErrorKind::RunFile,
          "cannot read dataset '" + objectName(ds) + "'", path);
}

std::int64_t readIntScalar(hid_t loc, const std::string& name, const std::string& path)
{
    const H5Lock lock(h5Mutex());
    std::int64_t value = 0;
    readAll(openDataset(loc, name, path).id(), H5T_NATIVE_INT64, &value, 1, path);
    return value;
}

double readDoubleScalar(hid_t loc, const std::string& name, const std::string& path)
{
    const H5Lock lock(h5Mutex());
    double value = 0;
    readAll(openDataset(loc, name, path).id(), H5T_NATIVE_DOUBLE, &value, 1, path);
    return value;
}

void appendRow(hid_t ds, hid_t memType, const void* row, const std::string& path)
{
    const H5Lock lock(h5Mutex());
    auto dims = datasetShape(ds);
    const hsize_t rows = dims[0];
    dims[0] = rows + 1;
    check(H5Dset_extent(ds, dims.data()), ErrorKind::Io, "cannot extend the log", path);
    H5Handle file(H5Dget_space(ds), H5Sclose);
    std::vector<hsize_t> start(dims.size(), 0), count = dims;
    start[0] = rows;
    count[0] = 1;
    H5Sselect_hyperslab(file.id(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr);
    H5Handle mem(H5Screate_simple(static_cast<int>(count.size()), count.data(), nullptr), H5Sclose);
    check(H5Dwrite(ds, memType, mem.id(), file.id(), H5P_DEFAULT, row), ErrorKind::Io,
          "cannot append to the log", path);
}

void removeObject(hid_t loc, const std::string& name, const std::string& path)
{
    const H5Lock lock(h5Mutex());
    check(H5Ldelete(loc, name.c_str(), H5P_DEFAULT), ErrorKind::Io, "cannot remove " + name, path);
}

void removeAttribute(hid_t loc, const std::string& object, const std::string& name,
                     const std::string& path)
{
    const H5Lock lock(h5Mutex());
    check(H5Adelete_by_name(loc, object.c_str(), name.c_str(), H5P_DEFAULT), ErrorKind::Io,
          "cannot remove attribute " + name + " of " + object, path);
}

void growRows(hid_t ds, hsize_t rows, const std::string& path)
{
    const H5Lock lock(h5Mutex());
    auto dims = datasetShape(ds);
    if (dims.empty() || dims[0] >= rows)
        return;
    dims[0] = rows;
    check(H5Dset_extent(ds, dims.data()), ErrorKind::Io, "cannot extend the log", path);
}

void truncateRows(hid_t ds, hsize_t rows, const std::string& path)
{
    const H5Lock lock(h5Mutex());
    auto dims = datasetShape(ds);
    if (dims.empty() || dims[0] <= rows)
        return;
    dims[0] = rows;
    check(H5Dset_extent(ds, dims.data()), ErrorKind::Io, "cannot truncate the log", path);
}

}  // namespace lengen::engine::io
