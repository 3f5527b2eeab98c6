// Attribute listing, float16 and chunked datasets, and block (hyperslab) reads and writes:
// what the attention maps and the probe and run readers need beyond whole datasets.
// Like the rest of the layer, callers hold h5Lock().

#include "io/h5.h"

namespace lengen::engine::io {

std::map<std::string, std::vector<double>> numericAttributes(hid_t obj, const std::string& path)
{
    const H5Lock lock(h5Mutex());
    std::map<std::string, std::vector<double>> out;
    H5O_info_t info;
    if (H5Oget_info2(obj, &info, H5O_INFO_NUM_ATTRS) < 0)
        throwH5(ErrorKind::RunFile, "cannot list attributes", path);
    for (hsize_t i = 0; i < info.num_attrs; ++i) {
        H5Handle attr(
            H5Aopen_by_idx(obj, ".", H5_INDEX_NAME, H5_ITER_INC, i, H5P_DEFAULT, H5P_DEFAULT),
            H5Aclose);
        if (!attr.valid())
            throwH5(ErrorKind::RunFile, "cannot open an attribute", path);
        H5Handle type(H5Aget_type(attr.id()), H5Tclose);
        const auto cls = H5Tget_class(type.id());
        if (cls != H5T_FLOAT && cls != H5T_INTEGER)
            continue;
        char name[256] = {};
        H5Aget_name(attr.id(), sizeof name, name);
        H5Handle space(H5Aget_space(attr.id()), H5Sclose);
        const auto n = H5Sget_simple_extent_npoints(space.id());
        if (n < 0)
            throwH5(ErrorKind::RunFile, std::string("cannot read attribute ") + name, path);
        std::vector<double> values(static_cast<size_t>(n));
        if (H5Aread(attr.id(), H5T_NATIVE_DOUBLE, values.data()) < 0)
            throwH5(ErrorKind::RunFile, std::string("cannot read attribute ") + name, path);
        out[name] = std::move(values);
    }
    return out;
}

H5Handle halfType()
{
    const H5Lock lock(h5Mutex());
    hid_t t = H5Tcopy(H5T_IEEE_F32LE);
    H5Tset_fields(t, 15, 10, 5, 0, 10);
    H5Tset_size(t, 2);
    H5Tset_ebias(t, 15);
    H5Tset_precision(t, 16);
    return H5Handle(t, H5Tclose);
}

H5Handle createChunkedDataset(hid_t loc, const std::string& name, hid_t type,
                              const std::vector<hsize_t>& dims, const std::vector<hsize_t>& chunk,
                              const std::string& path)
{
    const H5Lock lock(h5Mutex());
    const int rank = static_cast<int>(dims.size());
    H5Handle space(H5Screate_simple(rank, dims.data(), nullptr), H5Sclose);
    H5Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
    if (H5Pset_chunk(dcpl.id(), rank, chunk.data()) < 0 || H5Pset_deflate(dcpl.id(), 1) < 0)
        throwH5(ErrorKind::Io, "cannot set up dataset " + name, path);
    H5Handle ds(
        H5Dcreate2(loc, name.c_str(), type, space.id(), H5P_DEFAULT, dcpl.id(), H5P_DEFAULT),
        H5Dclose);
    if (!ds.valid())
        throwH5(ErrorKind::Io, "cannot create dataset " + name, path);
    return ds;
}

namespace {

// File and memory dataspaces selecting the block; false if the block lies outside the dataset.
bool selectBlock(hid_t ds, const std::vector<hsize_t>& start, const std::vector<hsize_t>& count,
                 H5Handle& file, H5Handle& mem)
{
    file = H5Handle(H5Dget_space(ds), H5Sclose);
    mem =
        H5Handle(H5Screate_simple(static_cast<int>(count.size()), count.data(), nullptr), H5Sclose);
    return file.valid() && mem.valid() &&
           H5Sselect_hyperslab(file.id(), H5S_SELECT_SET, start.data(), nullptr, count.data(),
                               nullptr) >= 0 &&
           H5Sselect_valid(file.id()) > 0;
}

}  // namespace

void writeBlock(hid_t ds, hid_t memType, const std::vector<hsize_t>& start,
                const std::vector<hsize_t>& count, const void* data, const std::string& path)
{
    const H5Lock lock(h5Mutex());
    H5Handle file, mem;
    if (!selectBlock(ds, start, count, file, mem) ||
        H5Dwrite(ds, memType, mem.id(), file.id(), H5P_DEFAULT, data) < 0)
        throwH5(ErrorKind::Io, "cannot write a block of a dataset", path);
}

void readBlock(hid_t ds, hid_t memType, const std::vector<hsize_t>& start,
               const std::vector<hsize_t>& count, void* data, const std::string& path)
{
    const H5Lock lock(h5Mutex());
    H5Handle file, mem;
    if (!selectBlock(ds, start, count, file, mem) ||
        H5Dread(ds, memType, mem.id(), file.id(), H5P_DEFAULT, data) < 0)
        throwH5(ErrorKind::RunFile, "cannot read a block of a dataset", path);
}

}  // namespace lengen::engine::io
