// The runs under a folder, through a cache beside them (run_index.h). The cache is JSON:
// {"format": "lengen-run-index", "version": 1, "configs": [{key: value}], "runs": [entry]},
// an entry's `config` indexing `configs`: runs that differ only in their seed (a sweep's
// cells) share one flattened config, which keeps 10,000 runs' index a few MB.

#include "lengen/engine/run_index.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <type_traits>
#include <variant>

#include "lengen/engine/analysis.h"
#include "lengen/engine/config.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/run_archive.h"
#include "lengen/engine/run_file.h"
#include "text_files.h"

namespace lengen::engine {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// 2: dims and points are what the run reached (issue 52); 3: results (min loss, steps/s, wall
// clock, each evaluation at the training and the longest length: issue 55).
// 5: the run's info whole, by runInfoFields() (issue 82 §2): a field added there needs no new
// version, an entry without its key is read again.
constexpr int kIndexVersion = 5;
constexpr std::uintmax_t kMaxIndexBytes = 512ull << 20;

std::int64_t mtimeNs(const fs::path& p, std::error_code& ec)
{
    const auto t = fs::last_write_time(p, ec);
    return ec ? 0
              : std::int64_t(
                    std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch())
                        .count());
}

json number(double v) { return std::isfinite(v) ? json(v) : json(); }
double numberFrom(const json& j) { return j.is_null() ? std::nan("") : j.get<double>(); }

json resultsJson(const std::vector<MethodResult>& results)
{
    json out = json::array();
    for (const auto& r : results)
        out.push_back({{"name", r.name},
                       {"train_pos", r.trainPosition},
                       {"last_pos", r.lastPosition},
                       {"at_train", number(r.atTrain)},
                       {"at_last", number(r.atLast)}});
    return out;
}

// The run's info, every field of runInfoFields() under its key: a field added there is stored
// here with no change (and an index written before it lacks its key: it is read again).
json infoJson(const RunFileInfo& info)
{
    json out = json::object();
    for (const auto& field : runInfoFields())
        std::visit(
            [&](auto member) {
                const auto& v = info.*member;
                using T = std::decay_t<decltype(v)>;
                if constexpr (std::is_same_v<T, double>)
                    out[field.key] = number(v);
                else if constexpr (std::is_same_v<T, ReachedCurriculum>)
                    out[field.key] = {v.stepsDone, v.dims, v.points, v.source};
                else
                    out[field.key] = v;
            },
            field.member);
    return out;
}

// json::at throws for a key the index lacks: the index is then read again whole.
void infoFromJson(const json& j, RunFileInfo& info)
{
    for (const auto& field : runInfoFields())
        std::visit(
            [&](auto member) {
                auto& v = info.*member;
                const auto& stored = j.at(field.key);
                using T = std::decay_t<decltype(v)>;
                if constexpr (std::is_same_v<T, double>)
                    v = numberFrom(stored);
                else if constexpr (std::is_same_v<T, ReachedCurriculum>)
                    v = {stored.at(0), stored.at(1), stored.at(2), stored.at(3)};
                else
                    v = stored.get<T>();
            },
            field.member);
}

json toJson(const RunIndexEntry& e, const std::string& relative, int config)
{
    const auto& st = e.stamp;
    return json{{"path", relative},
                {"stamp", {st.runSize, st.runMtimeNs, st.analysisSize, st.analysisMtimeNs}},
                {"info", infoJson(e.info)},
                {"error", e.error},
                {"seed", e.seed},
                {"dims", e.dims},
                {"points", e.points},
                {"end_dims", e.endDims},
                {"end_points", e.endPoints},
                {"reached", e.reached},
                {"hidden", e.hidden},
                {"layers", e.layers},
                {"heads", e.heads},
                {"steps", e.steps},
                {"results", resultsJson(e.results)},
                {"eval", e.evalMethods},
                {"probes", e.probes},
                {"config", config},
                {"config_seed", e.config.count("seed") ? json(e.config.at("seed")) : json()}};
}

RunIndexEntry fromJson(const json& j, const fs::path& folder,
                       const std::vector<std::map<std::string, std::string>>& configs)
{
    RunIndexEntry e;
    e.path = (folder / j.at("path").get<std::string>()).string();
    const auto& s = j.at("stamp");
    e.stamp = {s.at(0), s.at(1), s.at(2), s.at(3)};
    infoFromJson(j.at("info"), e.info);
    e.info.path = e.path;
    e.error = j.at("error");
    e.seed = j.at("seed");
    e.dims = j.at("dims");
    e.points = j.at("points");
    e.endDims = j.at("end_dims");
    e.endPoints = j.at("end_points");
    e.reached = j.at("reached");
    e.hidden = j.at("hidden");
    e.layers = j.at("layers");
    e.heads = j.at("heads");
    e.steps = j.at("steps");
    for (const auto& r : j.at("results"))
        e.results.push_back({r.at("name"), r.at("train_pos"), r.at("last_pos"),
                             numberFrom(r.at("at_train")), numberFrom(r.at("at_last"))});
    e.evalMethods = j.at("eval").get<std::vector<std::string>>();
    e.probes = j.at("probes").get<std::vector<std::string>>();
    const int c = j.at("config");
    if (c >= 0 && size_t(c) < configs.size())
        e.config = configs[size_t(c)];
    if (!j.at("config_seed").is_null())
        e.config["seed"] = j.at("config_seed").get<std::string>();
    return e;
}

// The index as stored: path (relative to the folder) -> entry. Empty when there is none, or it
// does not read (a cache: it is rebuilt, never trusted half).
std::map<std::string, RunIndexEntry> loadIndex(const fs::path& folder)
{
    std::map<std::string, RunIndexEntry> out;
    const auto file = runIndexFileFor(folder.string());
    std::error_code ec;
    if (!fs::exists(file, ec))
        return out;
    try {
        const auto j = json::parse(readTextFile(file, kMaxIndexBytes));
        if (j.at("format") != "lengen-run-index" || j.at("version") != kIndexVersion)
            return out;
        std::vector<std::map<std::string, std::string>> configs;
        for (const auto& c : j.at("configs"))
            configs.push_back(c.get<std::map<std::string, std::string>>());
        for (const auto& r : j.at("runs")) {
            auto e = fromJson(r, folder, configs);
            out.emplace(e.path, std::move(e));
        }
    } catch (const std::exception&) {
        out.clear();
    }
    return out;
}

void saveIndex(const fs::path& folder, const std::vector<RunIndexEntry>& runs)
{
    json configs = json::array(), list = json::array();
    std::map<std::map<std::string, std::string>, int> configIds;
    for (const auto& e : runs) {
        auto config = e.config;
        config.erase("seed");  // a sweep's cells share one config but their seed
        int id = -1;
        if (!config.empty()) {
            const auto [it, added] = configIds.emplace(config, int(configIds.size()));
            if (added)
                configs.push_back(config);
            id = it->second;
        }
        list.push_back(toJson(e, fs::path(e.path).lexically_relative(folder).string(), id));
    }
    const json j{{"format", "lengen-run-index"},
                 {"version", kIndexVersion},
                 {"configs", configs},
                 {"runs", list}};
    // Text that is not UTF-8 (a Latin-1 folder name) is replaced, never a reason to lose the index.
    // Its own temporary name: the studio's look on a worker and one on the GUI thread, or
    // `lengen runs` beside the studio, may rewrite the index at the same moment.
    writeFileAtomically(runIndexFileFor(folder.string()),
                        j.dump(-1, ' ', false, json::error_handler_t::replace), true);
}

}  // namespace

std::string runIndexFileFor(const std::string& folder)
{
    return (fs::path(folder) / ".lengen-index.json").string();
}

RunStamp runStamp(const std::string& runFile)
{
    RunStamp st;
    std::error_code ec;
    const fs::path run(runFile);
    const auto size = fs::file_size(run, ec);
    if (ec)
        return st;
    st.runSize = std::int64_t(size);
    st.runMtimeNs = mtimeNs(run, ec);
    const auto analysis = run.parent_path() / "analysis.h5";
    const auto asize = fs::file_size(analysis, ec);
    if (!ec) {
        st.analysisSize = std::int64_t(asize);
        st.analysisMtimeNs = mtimeNs(analysis, ec);
    }
    return st;
}

namespace {

// Each stored evaluation's trained model at the training length and at its longest length.
std::vector<MethodResult> methodResults(const std::vector<EvalResult>& evaluations)
{
    std::vector<MethodResult> out;
    for (const auto& r : evaluations) {
        if (r.curves.empty() || r.curves[0].stats.mean.empty())
            continue;
        const auto& mean = r.curves[0].stats.mean;  // the transformer, per position
        MethodResult m;
        m.name = r.intervention.empty() ? r.method : r.method + "+" + r.intervention;
        m.lastPosition = int(mean.size()) - 1;
        m.trainPosition = trainingPosition(r.trainedPoints, r.trainPoints, m.lastPosition);
        m.atTrain = mean[size_t(m.trainPosition)];
        m.atLast = mean.back();
        out.push_back(std::move(m));
    }
    return out;
}

// One run read from its files, its stamp already taken (before the read: a write meanwhile
// makes the next look read it again rather than keep a row older than its stamp).
RunIndexEntry readEntry(const std::string& runFile, const RunStamp& stamp)
{
    RunIndexEntry e;
    e.path = runFile;
    e.stamp = stamp;
    try {
        e.info = readRunInfo(runFile);
        auto& info = e.info;
        const auto cfg = storedRunConfig(info.configYaml, info.path);
        // The heavy parts stay in the file: the flattened config below stands for the text.
        info.configYaml.clear();
        info.parameters.clear();
        info.positionConstants.clear();
        // Unknown for a run of the Python code (it seeds nothing).
        e.seed = info.importedFrom.empty() ? std::int64_t(info.seed) : -1;
        // What the run trained on (issue 52); the curriculum's end before it trained a step.
        e.endDims = cfg.inputDims();
        e.endPoints = cfg.trainPoints();
        e.dims = info.reached.points > 0 ? info.reached.dims : e.endDims;
        e.points = info.reached.points > 0 ? info.reached.points : e.endPoints;
        e.reached = reachedText(info.reached, cfg);
        if (cfg.isBooleanTask())  // boolean tasks draw every dimension whatever the curriculum says
            e.dims = e.endDims;
        e.hidden = cfg.model.hiddenSize;
        e.layers = cfg.model.numLayers;
        e.heads = cfg.model.numHeads;
        // Steps as they land: the last logged step while a run trains (its checkpoint lags).
        e.steps = std::max<std::int64_t>({0, info.checkpointStep, info.lastLoggedStep + 1});
        if (info.totalSteps > 0)
            e.steps = std::min(e.steps, info.totalSteps);
        e.config = flattenedConfig(cfg);
        if (e.stamp.analysisSize >= 0) {
            try {
                const auto a = analysisContents(runFile);
                e.evalMethods = a.evalMethods;
                e.probes = a.probes;
                if (!a.evalMethods.empty())
                    e.results = methodResults(readEvaluations(runFile));
            } catch (const std::exception& ex) {  // the run itself is fine; say what is wrong
                e.error = ex.what();
            }
        }
    } catch (const std::exception& ex) {
        e = RunIndexEntry{};  // nothing of a file that does not read is kept
        e.path = runFile;
        e.stamp = stamp;
        e.info.path = runFile;
        e.info.status = kDamagedStatus;
        e.info.task = fs::path(runFile).parent_path().filename().string();
        e.info.lastLoss = e.info.minLoss = kNoValue;
        e.info.meanStepsPerSecond = e.info.lastWallSeconds = kNoValue;
        e.error = ex.what();
    }
    return e;
}

}  // namespace

std::string createdText(const RunIndexEntry& run)
{
    std::string out = run.info.createdAt;
    std::replace(out.begin(), out.end(), 'T', ' ');
    out.erase(std::remove(out.begin(), out.end(), 'Z'), out.end());
    return out;
}

RunIndexEntry readRunEntry(const std::string& runFile)
{
    return readEntry(runFile, runStamp(runFile));
}

FolderScan scanFolder(const std::string& folderName)
{
    FolderScan scan;
    const fs::path folder(folderName);
    std::error_code ec;
    if (fs::is_regular_file(folder, ec)) {
        if (folder.filename() == "run.h5" || folder.extension() == ".h5")
            scan.runFiles.push_back(folder.string());
        return scan;
    }
    for (int attempt = 0;; ++attempt) {
        scan = {};
        std::error_code walk;
        for (fs::recursive_directory_iterator
                 it(folder, fs::directory_options::skip_permission_denied, walk),
             end;
             !walk && it != end; it.increment(walk)) {
            std::error_code entry;
            const auto name = it->path().filename().string();
            // Runs moved to the trash or the archive are out of every list (run_archive.h).
            if ((name == kTrashFolder || name == kArchiveFolder) && it->is_directory(entry)) {
                it.disable_recursion_pending();
                continue;
            }
            if (name == "run.h5" && it->is_regular_file(entry))
                scan.runFiles.push_back(it->path().string());
            else if (name == "sweep.yaml" &&
                     fs::exists(it->path().parent_path() / "index.json", entry))
                scan.sweeps.push_back(it->path().parent_path().string());
            else if (name.rfind(".lengen-job-", 0) == 0 && name.size() > 5 &&
                     name.compare(name.size() - 5, 5, ".lock") == 0)
                scan.jobMarkers.push_back(it->path().string());
            else if (const auto dir = it->path().parent_path();
                     name == "state.pt" && it->is_regular_file(entry) &&
                     fs::is_regular_file(dir / "config.yaml", entry) &&
                     !fs::exists(dir / "run.h5", entry))
                scan.referenceRuns.push_back(dir.string());
        }
        if (!walk)
            break;
        if (attempt == 1)
            throw Error(ErrorKind::Io,
                        "cannot list the runs under " + folder.string() + ": " + walk.message());
    }
    for (auto* list : {&scan.runFiles, &scan.sweeps, &scan.jobMarkers, &scan.referenceRuns})
        std::sort(list->begin(), list->end());
    return scan;
}

RunIndexChanges refreshRunIndex(const std::string& folderName,
                                const std::vector<RunIndexEntry>& known)
{
    RunIndexChanges changes;
    const fs::path folder(folderName);
    std::error_code ec;
    const bool single = fs::is_regular_file(folder, ec);
    const auto files = scanFolder(folderName).runFiles;
    std::map<std::string, const RunIndexEntry*> before;
    for (const auto& e : known)
        before.emplace(e.path, &e);
    std::vector<RunIndexEntry> all;  // the folder's runs now, for its index
    all.reserve(files.size());
    for (const auto& file : files) {
        const auto now = runStamp(file);
        const auto it = before.find(file);
        if (it == before.end()) {
            all.push_back(readEntry(file, now));
            changes.added.push_back(all.back());
            continue;
        }
        if (it->second->stamp != now || it->second->info.status == "running") {
            all.push_back(readEntry(file, now));
            // A running run re-read unchanged is not a change: views redraw nothing.
            if (it->second->stamp != now || all.back().info.status != it->second->info.status)
                changes.changed.push_back(all.back());
        } else {
            all.push_back(*it->second);
        }
        before.erase(it);
    }
    for (const auto& [path, entry] : before)
        changes.removed.push_back(path);
    if (changes.any() && !single && !all.empty()) {
        try {
            saveIndex(folder, all);
        } catch (const std::exception&) {  // a read-only folder: listed without a cache
        }
    }
    return changes;
}

std::vector<RunIndexEntry> indexRuns(const std::string& folderName, RunIndexStats* stats)
{
    RunIndexStats local;
    auto& st = stats ? *stats : local;
    st = {};
    const fs::path folder(folderName);
    std::error_code ec;
    if (fs::is_regular_file(folder, ec)) {  // a run.h5 given as itself: nothing to cache
        st.runs = st.read = 1;
        return {readRunEntry(folder.string())};
    }
    std::vector<std::string> files = scanFolder(folderName).runFiles;
    auto cached = loadIndex(folder);
    std::vector<RunIndexEntry> out;
    out.reserve(files.size());
    bool changed = cached.size() != files.size();
    for (const auto& file : files) {
        const auto now = runStamp(file);
        const auto it = cached.find(file);
        if (it != cached.end() && it->second.stamp == now && it->second.info.status != "running") {
            out.push_back(std::move(it->second));
            ++st.fromIndex;
        } else {
            out.push_back(readEntry(file, now));
            ++st.read;
            changed = true;
        }
    }
    st.runs = out.size();
    if (changed && !out.empty()) {
        try {
            saveIndex(folder, out);
            st.indexWritten = true;
        } catch (const std::exception&) {  // a read-only folder: listed without a cache
        }
    }
    return out;
}

std::optional<std::string> runValue(const RunIndexEntry& run, const std::string& key)
{
    if (key == "pe")
        return run.info.positionEncoding;
    if (key == "task")
        return run.info.task;
    if (key == "backbone")
        return run.info.backbone;
    if (key == "status")
        return statusLabel(run.info.status);
    if (key == "id" || key == "run_id")
        return run.info.runId;
    if (key == "sweep")
        return run.info.sweepName;
    const auto it = run.config.find(key);
    if (it == run.config.end())
        return std::nullopt;
    return it->second;
}

}  // namespace lengen::engine
