// Strings, attributes, member lists and whole 1-D float64 datasets: the values run and analysis
// files carry besides tensors. Readers check that a value has the size they read into (an
// attribute that must be one value holds one) before HDF5 writes into their buffer.

#include <algorithm>
#include <cstring>

#include "io/h5.h"
#include "io/h5_internal.h"

namespace lengen::engine::io {

hid_t stringType(bool variable)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, variable ? H5T_VARIABLE : kStatusBytes);
    H5Tset_cset(t, H5T_CSET_UTF8);
    if (!variable)
        H5Tset_strpad(t, H5T_STR_NULLPAD);
    return t;
}

void writeStringDataset(hid_t loc, const std::string& name, const std::string& value,
                        const std::string& path)
{
    H5Handle type(stringType(true), H5Tclose);
    auto ds = createDataset(loc, name, type.id(), {}, path);
    const char* ptr = value.c_str();
    writeAll(ds.id(), type.id(), &ptr, 1, path);
}

std::string readStringDataset(hid_t loc, const std::string& name, const std::string& path)
{
    auto ds = openDataset(loc, name, path);
    H5Handle type(stringType(true), H5Tclose);
    char* ptr = nullptr;
    readAll(ds.id(), type.id(), &ptr, 1, path);
    std::string value = ptr ? ptr : "";
    H5free_memory(ptr);
    return value;
}

namespace {
void writeAttr(hid_t loc, const std::string& name, hid_t type, hid_t space, const void* data,
               const std::string& path)
{
    if (H5Aexists(loc, name.c_str()) > 0)
        H5Adelete(loc, name.c_str());
    H5Handle attr(H5Acreate2(loc, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT),
                  H5Aclose);
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
        throw Error(ErrorKind::RunFile, "attribute '" + name + "' of '" + objectName(loc) +
                                            "' in " + path + " should be a single value, found " +
                                            (n < 0 ? std::string("an unreadable one")
                                                   : std::to_string(n) + " values") +
                                            " (damaged or foreign file)");
    return attr;
}
}  // namespace

void writeAttribute(hid_t loc, const std::string& name, const std::string& value,
                    const std::string& path)
{
    H5Handle type(stringType(true), H5Tclose);
    H5Handle space(H5Screate(H5S_SCALAR), H5Sclose);
    const char* ptr = value.c_str();
    writeAttr(loc, name, type.id(), space.id(), &ptr, path);
}

void writeAttribute(hid_t loc, const std::string& name, std::int64_t value,
                    const std::string& path)
{
    H5Handle space(H5Screate(H5S_SCALAR), H5Sclose);
    writeAttr(loc, name, H5T_NATIVE_INT64, space.id(), &value, path);
}

void writeAttribute(hid_t loc, const std::string& name, std::uint64_t value,
                    const std::string& path)
{
    H5Handle space(H5Screate(H5S_SCALAR), H5Sclose);
    writeAttr(loc, name, H5T_NATIVE_UINT64, space.id(), &value, path);
}

void writeAttribute(hid_t loc, const std::string& name, const std::vector<double>& value,
                    const std::string& path)
{
    const hsize_t n = value.size();
    H5Handle space(H5Screate_simple(1, &n, nullptr), H5Sclose);
    writeAttr(loc, name, H5T_NATIVE_DOUBLE, space.id(), value.data(), path);
}

bool hasAttribute(hid_t loc, const std::string& name)
{
    const htri_t r = H5Aexists(loc, name.c_str());
    if (r < 0)
        H5Eclear2(H5E_DEFAULT);
    return r > 0;
}

std::string readStringAttribute(hid_t loc, const std::string& name, const std::string& path)
{
    auto attr = openScalarAttr(loc, name, path);
    H5Handle type(stringType(true), H5Tclose);
    char* ptr = nullptr;
    check(H5Aread(attr.id(), type.id(), &ptr), ErrorKind::RunFile,
          "cannot read attribute " + name, path);
    std::string value = ptr ? ptr : "";
    H5free_memory(ptr);
    return value;
}

namespace {
template <typename T>
T readNumberAttribute(hid_t loc, const std::string& name, hid_t memType, const std::string& path)
{
    auto attr = openScalarAttr(loc, name, path);
    T value = 0;
    check(H5Aread(attr.id(), memType, &value), ErrorKind::RunFile,
          "cannot read attribute " + name, path);
    return value;
}
}  // namespace

std::int64_t readIntAttribute(hid_t loc, const std::string& name, const std::string& path)
{
    return readNumberAttribute<std::int64_t>(loc, name, H5T_NATIVE_INT64, path);
}

std::uint64_t readUIntAttribute(hid_t loc, const std::string& name, const std::string& path)
{
    return readNumberAttribute<std::uint64_t>(loc, name, H5T_NATIVE_UINT64, path);
}

std::vector<double> readDoublesAttribute(hid_t loc, const std::string& name,
                                         const std::string& path)
{
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
    std::vector<std::string> names;
    H5Literate(group, H5_INDEX_NAME, H5_ITER_INC, nullptr, collectName, &names);
    return names;
}

void writeDoubles(hid_t loc, const std::string& name, const std::vector<double>& values,
                  const std::string& path)
{
    auto ds = createDataset(loc, name, H5T_IEEE_F64LE, {values.size()}, path);
    if (!values.empty())
        writeAll(ds.id(), H5T_NATIVE_DOUBLE, values.data(), values.size(), path);
}

std::vector<double> readDoubles(hid_t loc, const std::string& name, const std::string& path)
{
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

hid_t fixedStringType() { return stringType(false); }

void writeFixedString(hid_t ds, const std::string& value, const std::string& path)
{
    H5Handle type(stringType(false), H5Tclose);
    char buf[kStatusBytes] = {};
    std::memcpy(buf, value.data(), std::min(value.size(), kStatusBytes));
    writeAll(ds, type.id(), buf, 1, path);
}

std::string readFixedString(hid_t ds, const std::string& path)
{
    H5Handle type(stringType(false), H5Tclose);
    char buf[kStatusBytes + 1] = {};
    readAll(ds, type.id(), buf, 1, path);
    return std::string(buf);
}

}  // namespace lengen::engine::io
