// Strings, attributes, member lists and whole 1-D float64 datasets: the values run and analysis
// files carry besides tensors. Readers check that a value has the size they read into (an
// attribute that must be one value holds one) before HDF5 writes into their buffer.

#include <algorithm>
#include <cstring>

#include "io/h5.h"
#include "io/h5_internal.h"

namespace lengen::engine::io {

// Strings are written fixed-length (NULLPAD, exactly the value's bytes): they live in the object
// header or the dataset's own storage. Variable-length strings live in HDF5's global heap, and
// HDF5 1.10 trusts a global heap's object sizes: one flipped byte there made H5Aread copy past
// its buffer (SIGSEGV inside H5HG_read). Readers still accept variable-length strings (earlier
// LenGen files, files made with h5py), after checkGlobalHeaps has walked the file's heaps.
hid_t stringType(size_t bytes)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_cset(t, H5T_CSET_UTF8);
    if (bytes == kVariableString) {
        H5Tset_size(t, H5T_VARIABLE);
    } else {
        H5Tset_size(t, bytes);
        H5Tset_strpad(t, H5T_STR_NULLPAD);
    }
    return t;
}

namespace {
// Reads one string value of an attribute or dataset whose on-disk type is `fileType`; `read`
// performs the HDF5 read into a buffer with the given memory type.
template <typename Read>
std::string readStringValue(hid_t object, hid_t fileType, const std::string& what,
                            const std::string& path, Read&& read)
{
    if (H5Tget_class(fileType) != H5T_STRING)
        throw Error(ErrorKind::RunFile,
                    what + " in " + path + " should be a string (damaged or foreign file)");
    if (H5Tis_variable_str(fileType) > 0) {
        checkGlobalHeaps(object, path);  // HDF5 trusts the heap's sizes
        H5Handle type(stringType(kVariableString), H5Tclose);
        char* ptr = nullptr;
        check(read(type.id(), static_cast<void*>(&ptr)), ErrorKind::RunFile, "cannot read " + what,
              path);
        std::string value = ptr ? ptr : "";
        H5free_memory(ptr);
        return value;
    }
    const size_t bytes = H5Tget_size(fileType);
    if (bytes == 0 || bytes > kMaxStringBytes)
        throw Error(ErrorKind::RunFile, what + " in " + path + " claims a string of " +
                                            std::to_string(bytes) +
                                            " bytes (damaged or foreign file)");
    H5Handle type(stringType(bytes), H5Tclose);
    std::string value(bytes, '\0');
    check(read(type.id(), static_cast<void*>(value.data())), ErrorKind::RunFile,
          "cannot read " + what, path);
    value.resize(std::strlen(value.c_str()));  // NULLPAD / NULLTERM: the value ends at a NUL
    return value;
}
}  // namespace

void writeStringDataset(hid_t loc, const std::string& name, const std::string& value,
                        const std::string& path)
{
    const H5Lock lock(h5Mutex());
    H5Handle type(stringType(std::max<size_t>(1, value.size())), H5Tclose);
    auto ds = createDataset(loc, name, type.id(), {}, path);
    writeAll(ds.id(), type.id(), value.empty() ? "" : value.data(), 1, path);
}

std::string readStringDataset(hid_t loc, const std::string& name, const std::string& path)
{
    const H5Lock lock(h5Mutex());
    auto ds = openDataset(loc, name, path);
    H5Handle fileType(H5Dget_type(ds.id()), H5Tclose);
    check(fileType.id(), ErrorKind::RunFile, "cannot read the type of dataset " + name, path);
    return readStringValue(ds.id(), fileType.id(), "dataset '" + name + "'", path,
                           [&](hid_t memType, void* buf) {
                               // readAll checks the dataset holds exactly one value first.
                               readAll(ds.id(), memType, buf, 1, path);
                               return herr_t(0);
                           });
}

namespace {
void writeAttr(hid_t loc, const std::string& name, hid_t type, hid_t space, const void* data,
               const std::string& path)
{
    if (H5Aexists(loc, name.c_str()) > 0)
        H5Adelete(loc, name.c_str());
    H5Handle attr(H5Acreate2(loc, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
    check(attr.id(), ErrorKind::Io, "cannot create attribute " + name, path);
    check(H5Awrite(attr.id(), type, data), ErrorKind::Io, "cannot write attribute " + name, path);
}

H5Handle openAttr(hid_t loc, const std::string& name, const std::string& path)
{
    hid_t id = H5Aopen(loc, name.c_str(), H5P_DEFAULT);
    check(id, ErrorKind::RunFile, "missing attribute '" + name + "' in the run file", path);
    return H5Handle(id, H5Aclose);
}

// Opens an attribute that must hold exactly one value (a number or a string).
H5Handle openScalarAttr(hid_t loc, const std::string& name, const std::string& path)
{
    auto attr = openAttr(loc, name, path);
    H5Handle space(H5Aget_space(attr.id()), H5Sclose);
    const hssize_t n = space.valid() ? H5Sget_simple_extent_npoints(space.id()) : -1;
    if (n != 1)
        throw Error(ErrorKind::RunFile,
                    "attribute '" + name + "' of '" + objectName(loc) + "' in " + path +
                        " should be a single value, found " +
                        (n < 0 ? std::string("an unreadable one") : std::to_string(n) + " values") +
                        " (damaged or foreign file)");
    return attr;
}
}  // namespace

void writeAttribute(hid_t loc, const std::string& name, const std::string& value,
                    const std::string& path)
{
    const H5Lock lock(h5Mutex());
    H5Handle type(stringType(std::max<size_t>(1, value.size())), H5Tclose);
    H5Handle space(H5Screate(H5S_SCALAR), H5Sclose);
    writeAttr(loc, name, type.id(), space.id(), value.empty() ? "" : value.data(), path);
}

void writeAttribute(hid_t loc, const std::string& name, std::int64_t value, const std::string& path)
{
    const H5Lock lock(h5Mutex());
    H5Handle space(H5Screate(H5S_SCALAR), H5Sclose);
    writeAttr(loc, name, H5T_NATIVE_INT64, space.id(), &value, path);
}

void writeAttribute(hid_t loc, const std::string& name, std::uint64_t value,
                    const std::string& path)
{
    const H5Lock lock(h5Mutex());
    H5Handle space(H5Screate(H5S_SCALAR), H5Sclose);
    writeAttr(loc, name, H5T_NATIVE_UINT64, space.id(), &value, path);
}

void writeAttribute(hid_t loc, const std::string& name, const std::vector<double>& value,
                    const std::string& path)
{
    const H5Lock lock(h5Mutex());
    const hsize_t n = value.size();
    H5Handle space(H5Screate_simple(1, &n, nullptr), H5Sclose);
    writeAttr(loc, name, H5T_NATIVE_DOUBLE, space.id(), value.data(), path);
}

bool hasAttribute(hid_t loc, const std::string& name)
{
    const H5Lock lock(h5Mutex());
    const htri_t r = H5Aexists(loc, name.c_str());
    if (r < 0)
        H5Eclear2(H5E_DEFAULT);
    return r > 0;
}

std::string readStringAttribute(hid_t loc, const std::string& name, const std::string& path)
{
    const H5Lock lock(h5Mutex());
    auto attr = openScalarAttr(loc, name, path);
    H5Handle fileType(H5Aget_type(attr.id()), H5Tclose);
    check(fileType.id(), ErrorKind::RunFile, "cannot read the type of attribute " + name, path);
    return readStringValue(
        attr.id(), fileType.id(), "attribute '" + name + "'", path,
        [&](hid_t memType, void* buf) { return H5Aread(attr.id(), memType, buf); });
}

namespace {
template <typename T>
T readNumberAttribute(hid_t loc, const std::string& name, hid_t memType, const std::string& path)
{
    auto attr = openScalarAttr(loc, name, path);
    T value = 0;
    check(H5Aread(attr.id(), memType, &value), ErrorKind::RunFile, "cannot read attribute " + name,
          path);
    return value;
}
}  // namespace

std::int64_t readIntAttribute(hid_t loc, const std::string& name, const std::string& path)
{
    const H5Lock lock(h5Mutex());
    return readNumberAttribute<std::int64_t>(loc, name, H5T_NATIVE_INT64, path);
}

std::uint64_t readUIntAttribute(hid_t loc, const std::string& name, const std::string& path)
{
    const H5Lock lock(h5Mutex());
    return readNumberAttribute<std::uint64_t>(loc, name, H5T_NATIVE_UINT64, path);
}

std::vector<double> readDoublesAttribute(hid_t loc, const std::string& name,
                                         const std::string& path)
{
    const H5Lock lock(h5Mutex());
    auto attr = openAttr(loc, name, path);
    H5Handle space(H5Aget_space(attr.id()), H5Sclose);
    std::vector<double> values(static_cast<size_t>(H5Sget_simple_extent_npoints(space.id())));
    check(H5Aread(attr.id(), H5T_NATIVE_DOUBLE, values.data()), ErrorKind::RunFile,
          "cannot read attribute " + name, path);
    return values;
}

namespace {
herr_t collectName(hid_t, const char* name, const H5L_info_t*, void* data)
{
    static_cast<std::vector<std::string>*>(data)->push_back(name);
    return 0;
}
}  // namespace

std::vector<std::string> memberNames(hid_t group)
{
    const H5Lock lock(h5Mutex());
    // Native order, sorted here: for H5_ITER_INC HDF5 1.10 first builds a table of a dense
    // group's links, and on a damaged link heap its error path frees pointers it never set
    // (found by fuzz_run_file; heap corruption, then an abort at exit). Native order walks the
    // name index directly. Sorting bytewise gives HDF5's name order (strcmp).
    std::vector<std::string> names;
    H5Literate(group, H5_INDEX_NAME, H5_ITER_NATIVE, nullptr, collectName, &names);
    std::sort(names.begin(), names.end());
    return names;
}

void writeDoubles(hid_t loc, const std::string& name, const std::vector<double>& values,
                  const std::string& path)
{
    const H5Lock lock(h5Mutex());
    auto ds = createDataset(loc, name, H5T_IEEE_F64LE, {values.size()}, path);
    if (!values.empty())
        writeAll(ds.id(), H5T_NATIVE_DOUBLE, values.data(), values.size(), path);
}

std::vector<double> readDoubles(hid_t loc, const std::string& name, const std::string& path)
{
    const H5Lock lock(h5Mutex());
    auto ds = openDataset(loc, name, path);
    const auto dims = datasetShape(ds.id());
    size_t n = 1;
    for (auto d : dims)
        n *= d;
    std::vector<double> out(n);
    if (n)
        readAll(ds.id(), H5T_NATIVE_DOUBLE, out.data(), n, path);
    return out;
}

hid_t fixedStringType() { return stringType(kStatusBytes); }

void writeFixedString(hid_t ds, const std::string& value, const std::string& path)
{
    const H5Lock lock(h5Mutex());
    H5Handle type(stringType(kStatusBytes), H5Tclose);
    char buf[kStatusBytes] = {};
    std::memcpy(buf, value.data(), std::min(value.size(), kStatusBytes));
    writeAll(ds, type.id(), buf, 1, path);
}

std::string readFixedString(hid_t ds, const std::string& path)
{
    const H5Lock lock(h5Mutex());
    H5Handle type(stringType(kStatusBytes), H5Tclose);
    char buf[kStatusBytes + 1] = {};
    readAll(ds, type.id(), buf, 1, path);
    return std::string(buf);
}

}  // namespace lengen::engine::io
