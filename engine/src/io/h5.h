#pragma once
// Thin RAII layer over the HDF5 C API. Every function here takes the process-wide recursive
// mutex h5Mutex() itself (HDF5 builds without thread-safety exist; Debian's has it, with
// per-thread error stacks), and a handle closes under it.
// Callers hold an H5Lock across a sequence of calls that must see one state of a file (the
// studio reads on the GUI thread while its worker writes). Errors become
// lengen::engine::Error(RunFile or Io) naming the file and HDF5's own innermost message.

#include <hdf5.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "lengen/engine/errors.h"

namespace lengen::engine::io {

std::recursive_mutex& h5Mutex();
using H5Lock = std::lock_guard<std::recursive_mutex>;

/// Owns one hid_t and closes it with the matching H5?close.
class H5Handle {
public:
    using Closer = herr_t (*)(hid_t);
    H5Handle() = default;
    H5Handle(hid_t id, Closer closer) : m_id(id), m_close(closer) {}
    H5Handle(H5Handle&& o) noexcept : m_id(o.m_id), m_close(o.m_close) { o.m_id = -1; }
    H5Handle& operator=(H5Handle&& o) noexcept;
    H5Handle(const H5Handle&) = delete;
    H5Handle& operator=(const H5Handle&) = delete;
    ~H5Handle() { reset(); }
    void reset();
    /// Gives up ownership (the caller closes it and checks the result).
    hid_t release()
    {
        const hid_t id = m_id;
        m_id = -1;
        return id;
    }
    hid_t id() const { return m_id; }
    bool valid() const { return m_id >= 0; }

private:
    hid_t m_id = -1;
    Closer m_close = nullptr;
};

/// Throws Error(kind) "<what> (<path>): <HDF5's innermost message>".
[[noreturn]] void throwH5(ErrorKind kind, const std::string& what, const std::string& path);

enum class OpenMode { ReadSwmr, ReadOnly, ReadWrite, ReadWriteAfterCrash };
/// Opens an existing file; Error(RunFile) if it is missing or not HDF5. ReadWriteAfterCrash also
/// clears the status flags a crashed SWMR writer leaves (as `h5clear -s`): only call it while
/// holding the run's writer lock, i.e. when no other process can be writing.
H5Handle openFile(const std::string& path, OpenMode mode);

/// Creates a new file with the latest format (needed for SWMR); Error(Io) on failure.
H5Handle createFile(const std::string& path);

H5Handle createGroup(hid_t loc, const std::string& name, const std::string& path);
H5Handle openGroup(hid_t loc, const std::string& name, const std::string& path);
H5Handle openDataset(hid_t loc, const std::string& name, const std::string& path);
bool exists(hid_t loc, const std::string& name);

/// Fixed-size dataset of `dims` (empty = scalar).
H5Handle createDataset(hid_t loc, const std::string& name, hid_t type,
                       const std::vector<hsize_t>& dims, const std::string& path);
/// Extendible dataset, 0 rows of `rowDims`, chunked by `chunkRows`, filled with `fill`.
H5Handle createLog(hid_t loc, const std::string& name, hid_t type,
                   const std::vector<hsize_t>& rowDims, hsize_t chunkRows, const void* fill,
                   const std::string& path);

std::vector<hsize_t> datasetShape(hid_t ds);
/// Bytes the file holds for a dataset's data (0 where none was ever written).
std::uint64_t storedBytes(hid_t ds);
/// The dims of `ds` after checking it has `rank` dimensions (0 = scalar). Error(RunFile) naming
/// the dataset and the file otherwise: readers index dims only after this check.
std::vector<hsize_t> shapeOf(hid_t ds, int rank, const std::string& path);
/// "/checkpoint/current": the object's path inside its file, for messages.
std::string objectName(hid_t obj);
/// Writes the whole dataset from `elements` values; Error(RunFile) if it holds another number.
void writeAll(hid_t ds, hid_t memType, const void* data, size_t elements, const std::string& path);
/// Reads the whole dataset into `elements` values of `memType`. Error(RunFile) naming the
/// dataset when it holds another number of values (an array where a scalar belongs, a wrong
/// shape) or its type does not convert: a damaged file never writes past `data`.
void readAll(hid_t ds, hid_t memType, void* data, size_t elements, const std::string& path);
/// Scalar (or one-element) integer / float dataset `name` under `loc`.
std::int64_t readIntScalar(hid_t loc, const std::string& name, const std::string& path);
double readDoubleScalar(hid_t loc, const std::string& name, const std::string& path);
/// Appends one row (rowDims elements) at the end of an extendible dataset.
void appendRow(hid_t ds, hid_t memType, const void* row, const std::string& path);
/// Unlinks `name` under `loc` (a dataset or group); Error(Io) if it cannot.
void removeObject(hid_t loc, const std::string& name, const std::string& path);
/// Deletes attribute `name` of the object at `object` (relative to loc).
void removeAttribute(hid_t loc, const std::string& object, const std::string& name,
                     const std::string& path);
/// Grows an extendible dataset to `rows` rows, filled with its fill value (no-op if longer).
void growRows(hid_t ds, hsize_t rows, const std::string& path);
/// Shrinks an extendible dataset to `rows` rows.
void truncateRows(hid_t ds, hsize_t rows, const std::string& path);

/// Variable-length UTF-8 string dataset / attribute.
void writeStringDataset(hid_t loc, const std::string& name, const std::string& value,
                        const std::string& path);
std::string readStringDataset(hid_t loc, const std::string& name, const std::string& path);
void writeAttribute(hid_t loc, const std::string& name, const std::string& value,
                    const std::string& path);
void writeAttribute(hid_t loc, const std::string& name, std::int64_t value,
                    const std::string& path);
void writeAttribute(hid_t loc, const std::string& name, std::uint64_t value,
                    const std::string& path);
void writeAttribute(hid_t loc, const std::string& name, const std::vector<double>& value,
                    const std::string& path);
std::string readStringAttribute(hid_t loc, const std::string& name, const std::string& path);
std::int64_t readIntAttribute(hid_t loc, const std::string& name, const std::string& path);
std::uint64_t readUIntAttribute(hid_t loc, const std::string& name, const std::string& path);
bool hasAttribute(hid_t loc, const std::string& name);
std::vector<double> readDoublesAttribute(hid_t loc, const std::string& name,
                                         const std::string& path);
/// Names of a group's members, in name order.
std::vector<std::string> memberNames(hid_t group);
/// 1-D float64 dataset written / read whole.
void writeDoubles(hid_t loc, const std::string& name, const std::vector<double>& values,
                  const std::string& path);
std::vector<double> readDoubles(hid_t loc, const std::string& name, const std::string& path);

/// Every numeric (integer or float) attribute of `obj` as doubles, by name; other attributes
/// (strings) are skipped. Error(RunFile) when one cannot be read.
std::map<std::string, std::vector<double>> numericAttributes(hid_t obj, const std::string& path);

/// IEEE float16, as h5py and numpy's float16 read it.
H5Handle halfType();
/// Chunked dataset of `dims` with deflate level 1 (for mostly-zero data such as causal maps).
H5Handle createChunkedDataset(hid_t loc, const std::string& name, hid_t type,
                              const std::vector<hsize_t>& dims, const std::vector<hsize_t>& chunk,
                              const std::string& path);
/// Writes / reads the block of `count` elements per dimension starting at `start`; `memType`
/// describes `data`, which is contiguous. Error(Io) / Error(RunFile) naming `path` on failure.
void writeBlock(hid_t ds, hid_t memType, const std::vector<hsize_t>& start,
                const std::vector<hsize_t>& count, const void* data, const std::string& path);
void readBlock(hid_t ds, hid_t memType, const std::vector<hsize_t>& start,
               const std::vector<hsize_t>& count, void* data, const std::string& path);

/// Fixed-length (16-byte, NUL-padded) status string, rewritable in SWMR mode.
constexpr size_t kStatusBytes = 16;
/// Longest string value a reader accepts (a stored config is a few KiB).
constexpr size_t kMaxStringBytes = size_t(16) << 20;
hid_t fixedStringType();  ///< caller closes it
void writeFixedString(hid_t ds, const std::string& value, const std::string& path);
std::string readFixedString(hid_t ds, const std::string& path);

}  // namespace lengen::engine::io
