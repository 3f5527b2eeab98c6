// The sweep's aggregate file (<sweep>/aggregate.h5, docs/sweep-format.md):
//   /                      format "lengen-sweep-aggregate", format_version, sweep, group_by,
//                          bootstrap_trials, missing (newline-separated cell names), sets (the
//                          sets' paths below, newline-separated, in method and grid order)
//   /eval/<method>/<group>/            attrs axes, cells, task, train_points, n_points, dims,
//                                      zero_estimator, classification, order
//   /eval/<method>/<group>/<curve>/    mean, band_low, band_high (float64 [positions]),
//                                      seeds (int64 [positions]); attrs label, band, transformer
//   /probe/<probe path>/<group>/...    the same for the probes' summary curves
// Written whole through AnalysisWriter (temporary file, fsync, rename).

#include <algorithm>

#include "io/analysis_store.h"
#include "lengen/engine/aggregate_records.h"
#include "lengen/engine/errors.h"

namespace lengen::engine {

namespace {

const char* kFormat = "lengen-sweep-aggregate";

std::string joinLines(const std::vector<std::string>& items)
{
    std::string out;
    for (const auto& s : items)
        out += (out.empty() ? "" : "\n") + s;
    return out;
}

std::string axesText(const std::vector<std::pair<std::string, std::string>>& axes)
{
    std::vector<std::string> parts;
    for (const auto& [k, v] : axes)
        parts.push_back(k + "=" + v);
    return joinLines(parts);
}

void writeInts(hid_t loc, const std::string& name, const std::vector<std::int64_t>& v,
               const std::string& path)
{
    auto ds = io::createDataset(loc, name, H5T_STD_I64LE, {hsize_t(v.size())}, path);
    io::writeAll(ds.id(), H5T_NATIVE_INT64, v.data(), v.size(), path);
}

std::vector<std::int64_t> readInts(hid_t loc, const std::string& name, const std::string& path)
{
    auto ds = io::openDataset(loc, name, path);
    const auto shape = io::shapeOf(ds.id(), 1, path);
    std::vector<std::int64_t> v(shape[0]);
    io::readAll(ds.id(), H5T_NATIVE_INT64, v.data(), v.size(), path);
    return v;
}

}  // namespace

void writeAggregate(const std::string& path, const SweepAggregate& a)
{
    io::AnalysisWriter w(path, "", /*startEmpty=*/true, kFormat);
    io::H5Lock lock(io::h5Mutex());
    const std::string& p = w.path();
    io::writeAttribute(w.file(), "sweep", a.sweep, p);
    io::writeAttribute(w.file(), "group_by", joinLines(a.groupBy), p);
    io::writeAttribute(w.file(), "bootstrap_trials", std::int64_t{a.bootstrapTrials}, p);
    io::writeAttribute(w.file(), "missing", joinLines(a.missing), p);
    std::vector<std::string> paths;
    for (const auto& set : a.sets)
        paths.push_back(set.kind + "/" + set.name + "/" + set.group);
    io::writeAttribute(w.file(), "sets", joinLines(paths), p);
    for (const auto& set : a.sets) {
        auto g = w.group(set.kind + "/" + set.name + "/" + set.group, true);
        io::writeAttribute(g.id(), "axes", axesText(set.groupAxes), p);
        io::writeAttribute(g.id(), "cells", joinLines(set.cells), p);
        io::writeAttribute(g.id(), "task", set.task, p);
        io::writeAttribute(g.id(), "train_points", std::int64_t{set.trainPoints}, p);
        io::writeAttribute(g.id(), "trained_points", std::int64_t{set.trainedPoints}, p);
        io::writeAttribute(g.id(), "n_points", std::int64_t{set.nPoints}, p);
        io::writeAttribute(g.id(), "dims", std::int64_t{set.dims}, p);
        io::writeAttribute(g.id(), "zero_estimator", std::vector<double>{set.zeroEstimator}, p);
        io::writeAttribute(g.id(), "classification", std::int64_t{set.classification}, p);
        std::vector<std::string> order;
        for (const auto& c : set.curves) {
            order.push_back(c.key);
            auto cg = io::createGroup(g.id(), c.key, p);
            io::writeAttribute(cg.id(), "label", c.label, p);
            io::writeAttribute(cg.id(), "band", c.band, p);
            io::writeAttribute(cg.id(), "transformer", std::int64_t{c.transformer}, p);
            io::writeDoubles(cg.id(), "mean", c.mean, p);
            io::writeDoubles(cg.id(), "band_low", c.low, p);
            io::writeDoubles(cg.id(), "band_high", c.high, p);
            writeInts(cg.id(), "seeds", c.seeds, p);
        }
        io::writeAttribute(g.id(), "order", joinLines(order), p);
    }
    w.commit();
}

SweepAggregate readAggregate(const std::string& path)
{
    io::H5Lock lock(io::h5Mutex());
    auto file = io::openFile(path, io::OpenMode::ReadOnly);
    if (!io::hasAttribute(file.id(), "format") ||
        io::readStringAttribute(file.id(), "format", path) != kFormat)
        throw Error(ErrorKind::RunFile,
                    "not a LenGen sweep aggregate file (HDF5, but foreign): " + path);
    const auto version = io::readIntAttribute(file.id(), "format_version", path);
    if (version > kAggregateFormatVersion)
        throw Error(ErrorKind::RunFile, "aggregate file format " + std::to_string(version) +
                                            " is newer than this build supports: " + path);
    SweepAggregate a;
    a.sweep = io::stringAttr(file.id(), "sweep", path);
    a.groupBy = io::splitLines(io::stringAttr(file.id(), "group_by", path));
    a.bootstrapTrials = int(io::intAttr(file.id(), "bootstrap_trials", 0, path));
    a.missing = io::splitLines(io::stringAttr(file.id(), "missing", path));
    for (const auto& setPath : io::splitLines(io::stringAttr(file.id(), "sets", path))) {
        const size_t first = setPath.find('/'), last = setPath.rfind('/');
        if (first == std::string::npos || last <= first)
            throw Error(ErrorKind::RunFile, "aggregate set '" + setPath + "' in " + path +
                                                " is not kind/name/group "
                                                "(damaged file)");
        auto g = io::openGroup(file.id(), setPath, path);
        const std::string kind = setPath.substr(0, first),
                          name = setPath.substr(first + 1, last - first - 1),
                          groupKey = setPath.substr(last + 1);
        AggregateSet set;
        set.kind = kind;
        set.name = name;
        set.group = groupKey;
        for (const auto& kv : io::splitLines(io::stringAttr(g.id(), "axes", path))) {
            const size_t eq = kv.find('=');
            if (eq != std::string::npos)
                set.groupAxes.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
        }
        set.cells = io::splitLines(io::stringAttr(g.id(), "cells", path));
        set.task = io::stringAttr(g.id(), "task", path);
        set.trainPoints = int(io::intAttr(g.id(), "train_points", 0, path));
        set.trainedPoints = int(io::intAttr(g.id(), "trained_points", set.trainPoints, path));
        set.nPoints = int(io::intAttr(g.id(), "n_points", 0, path));
        set.dims = int(io::intAttr(g.id(), "dims", 0, path));
        set.zeroEstimator = io::doubleAttr(g.id(), "zero_estimator", 0, path);
        set.classification = io::intAttr(g.id(), "classification", 0, path) != 0;
        for (const auto& key : io::readOrder(g.id(), path)) {
            auto cg = io::openGroup(g.id(), key, path);
            AggregateCurve c;
            c.key = key;
            c.label = io::stringAttr(cg.id(), "label", path);
            c.band = io::stringAttr(cg.id(), "band", path);
            c.transformer = io::intAttr(cg.id(), "transformer", 0, path) != 0;
            c.mean = io::readDoubles(cg.id(), "mean", path);
            c.low = io::readDoubles(cg.id(), "band_low", path);
            c.high = io::readDoubles(cg.id(), "band_high", path);
            c.seeds = readInts(cg.id(), "seeds", path);
            if (c.low.size() != c.mean.size() || c.high.size() != c.mean.size() ||
                c.seeds.size() != c.mean.size())
                throw Error(ErrorKind::RunFile,
                            "aggregate curve " + set.name + "/" + groupKey + "/" + key + " in " +
                                path + ": its datasets differ in length (damaged file)");
            set.curves.push_back(std::move(c));
        }
        a.sets.push_back(std::move(set));
    }
    return a;
}

}  // namespace lengen::engine
