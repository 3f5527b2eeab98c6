#include "io/analysis_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "lengen/engine/run_file.h"

namespace fs = std::filesystem;

namespace lengen::engine::io {

namespace {

void checkFormat(hid_t file, const std::string& path)
{
    if (!hasAttribute(file, "format") ||
        readStringAttribute(file, "format", path) != "lengen-analysis")
        throw Error(ErrorKind::RunFile, "not a LenGen analysis file (HDF5, but foreign): " + path);
    const auto version = readIntAttribute(file, "format_version", path);
    if (version > kAnalysisFormatVersion)
        throw Error(ErrorKind::RunFile, "analysis file format " + std::to_string(version) +
                                            " is newer than this build supports: " + path);
}

void syncFile(const std::string& path)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    const bool synced = fd >= 0 && ::fsync(fd) == 0;
    if (fd >= 0)
        ::close(fd);
    if (!synced)
        throw Error(ErrorKind::Io, "cannot write " + path + " to disk (disk full?)");
}

}  // namespace

AnalysisWriter::AnalysisWriter(const std::string& analysisPath, const std::string& runId,
                               bool startEmpty, const std::string& format)
    : m_path(analysisPath), m_partial(analysisPath + ".partial")
{
    H5Lock lock(h5Mutex());
    m_lock = std::make_unique<WriterLock>(m_path);
    std::error_code ec;
    fs::remove(m_partial, ec);  // left by a crashed editor: never part of the results
    try {
        if (!startEmpty && fs::exists(m_path)) {
            checkFormat(openAnalysis(m_path).id(), m_path);
            fs::copy_file(m_path, m_partial, fs::copy_options::overwrite_existing, ec);
            if (ec)
                throw Error(ErrorKind::Io, "cannot copy the analysis file to " + m_partial +
                                               " (disk full?): " + ec.message());
            m_file = openFile(m_partial, OpenMode::ReadWrite);
        } else {
            m_file = createFile(m_partial);
            writeAttribute(m_file.id(), "format", format, m_partial);
            writeAttribute(m_file.id(), "format_version", std::int64_t{kAnalysisFormatVersion},
                           m_partial);
        }
        if (!runId.empty())
            writeAttribute(m_file.id(), "run_id", runId, m_partial);
    } catch (...) {
        // The destructor does not run for a constructor that throws: clean up here.
        m_file.reset();
        fs::remove(m_partial, ec);
        throw;
    }
}

AnalysisWriter::~AnalysisWriter()
{
    if (m_committed)
        return;
    H5Lock lock(h5Mutex());
    m_file.reset();
    std::error_code ec;
    fs::remove(m_partial, ec);
}

H5Handle AnalysisWriter::group(const std::string& groupPath, bool fresh)
{
    H5Lock lock(h5Mutex());
    if (fresh && exists(m_file.id(), groupPath))
        H5Ldelete(m_file.id(), groupPath.c_str(), H5P_DEFAULT);
    if (exists(m_file.id(), groupPath))
        return openGroup(m_file.id(), groupPath, m_partial);
    H5Handle lcpl(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
    H5Pset_create_intermediate_group(lcpl.id(), 1);
    hid_t id = H5Gcreate2(m_file.id(), groupPath.c_str(), lcpl.id(), H5P_DEFAULT, H5P_DEFAULT);
    if (id < 0)
        throwH5(ErrorKind::Io, "cannot create group " + groupPath, m_partial);
    return H5Handle(id, H5Gclose);
}

void AnalysisWriter::commit()
{
    H5Lock lock(h5Mutex());
    if (H5Fflush(m_file.id(), H5F_SCOPE_GLOBAL) < 0)
        throwH5(ErrorKind::Io, "cannot write the analysis file (disk full?)", m_partial);
    if (H5Fclose(m_file.release()) < 0)  // closing writes the last metadata
        throwH5(ErrorKind::Io, "cannot write the analysis file (disk full?)", m_partial);
    syncFile(m_partial);
    if (std::rename(m_partial.c_str(), m_path.c_str()) != 0)
        throw Error(ErrorKind::Io, "cannot replace " + m_path + " with the updated results");
    m_committed = true;
}

H5Handle openAnalysis(const std::string& path)
{
    H5Lock lock(h5Mutex());
    auto file = openFile(path, OpenMode::ReadOnly);
    checkFormat(file.id(), path);
    return file;
}

void writeCurve(hid_t parent, const std::string& key, const std::string& label,
                const CurveStats& stats, const std::string& path)
{
    H5Lock lock(h5Mutex());
    auto g = createGroup(parent, key, path);
    writeAttribute(g.id(), "label", label, path);
    writeDoubles(g.id(), "mean", stats.mean, path);
    writeDoubles(g.id(), "std", stats.std, path);
    writeDoubles(g.id(), "bootstrap_low", stats.bootstrapLow, path);
    writeDoubles(g.id(), "bootstrap_high", stats.bootstrapHigh, path);
}

EvalCurve readCurve(hid_t parent, const std::string& key, const std::string& path)
{
    H5Lock lock(h5Mutex());
    auto g = openGroup(parent, key, path);
    EvalCurve c;
    c.model = key;
    c.label = hasAttribute(g.id(), "label") ? readStringAttribute(g.id(), "label", path) : key;
    c.stats.mean = readDoubles(g.id(), "mean", path);
    c.stats.std = readDoubles(g.id(), "std", path);
    c.stats.bootstrapLow = readDoubles(g.id(), "bootstrap_low", path);
    c.stats.bootstrapHigh = readDoubles(g.id(), "bootstrap_high", path);
    // Plots and exports index the four curves together.
    for (const auto* v : {&c.stats.std, &c.stats.bootstrapLow, &c.stats.bootstrapHigh})
        if (v->size() != c.stats.mean.size())
            throw Error(ErrorKind::RunFile, "curve '" + objectName(g.id()) + "' in " + path +
                                                " has columns of different lengths (damaged file)");
    return c;
}

std::vector<std::string> splitLines(const std::string& text)
{
    std::vector<std::string> out;
    size_t start = 0;
    while (start < text.size()) {
        const auto end = text.find('\n', start);
        out.push_back(
            text.substr(start, end == std::string::npos ? std::string::npos : end - start));
        if (end == std::string::npos)
            break;
        start = end + 1;
    }
    return out;
}

std::vector<std::string> readOrder(hid_t group, const std::string& path)
{
    const auto out = splitLines(stringAttr(group, "order", path));
    return out.empty() ? memberNames(group) : out;
}

std::int64_t intAttr(hid_t loc, const std::string& name, std::int64_t fallback,
                     const std::string& path)
{
    return hasAttribute(loc, name) ? readIntAttribute(loc, name, path) : fallback;
}

double doubleAttr(hid_t loc, const std::string& name, double fallback, const std::string& path)
{
    if (!hasAttribute(loc, name))
        return fallback;
    const auto v = readDoublesAttribute(loc, name, path);
    return v.empty() ? fallback : v[0];
}

int TrainedLength::at(std::int64_t checkpointStep, int fallback)
{
    if (!m_tried) {
        m_tried = true;
        try {
            const auto info = readRunInfo(m_run);
            m_config =
                std::make_shared<const RunConfig>(storedRunConfig(info.configYaml, info.path));
            m_reached = info.reached.points;
        } catch (const Error&) {
            // No readable run beside the analysis file: its results keep what they said.
        }
    }
    if (!m_config)
        return fallback;
    if (checkpointStep > 0)
        return m_config->curriculumAfter(checkpointStep).points;
    return m_reached > 0 ? m_reached : fallback;
}

std::string stringAttr(hid_t loc, const std::string& name, const std::string& path)
{
    return hasAttribute(loc, name) ? readStringAttribute(loc, name, path) : std::string();
}

}  // namespace lengen::engine::io
