#include "reference_commands.h"

#include <CLI/CLI.hpp>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "command_registry.h"
#include "common_options.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/reference_runs.h"

namespace lengen::cli {

namespace fs = std::filesystem;

namespace {

// Ctrl-C / SIGTERM during an import or export: remove what the unfinished one wrote, then exit
// 130. The handler only calls unlink, rmdir, write and _exit (async-signal-safe); the paths are
// prepared before the work starts.
constexpr int kMaxTemp = 8;
const char* g_files[kMaxTemp];
const char* volatile g_dir = nullptr;
volatile std::sig_atomic_t g_fileCount = 0;
std::vector<std::string> g_paths;  // owns the strings g_files / g_dir point to

extern "C" void removeUnfinished(int)
{
    for (int i = 0; i < g_fileCount; ++i)
        ::unlink(g_files[i]);
    if (g_dir)
        ::rmdir(g_dir);
    static const char msg[] = "\nlengen: interrupted; the unfinished run was removed\n";
    [[maybe_unused]] const auto n = ::write(STDERR_FILENO, msg, sizeof msg - 1);
    ::_exit(130);
}

void guardUnfinished(const std::vector<std::string>& files, const std::string& dir)
{
    g_fileCount = 0;
    g_dir = nullptr;
    g_paths = files;
    g_paths.push_back(dir);
    const int n = static_cast<int>(std::min<size_t>(files.size(), kMaxTemp));
    for (int i = 0; i < n; ++i)
        g_files[i] = g_paths[static_cast<size_t>(i)].c_str();
    g_dir = dir.empty() ? nullptr : g_paths.back().c_str();
    g_fileCount = n;
    // Nothing unfinished: the default action (what is written is complete).
    const bool guarding = n > 0 || !dir.empty();
    std::signal(SIGINT, guarding ? removeUnfinished : SIG_DFL);
    std::signal(SIGTERM, guarding ? removeUnfinished : SIG_DFL);
}

void guardImport(const std::string& refDir, const std::string& outDir)
{
    try {
        const std::string tmp =
            engine::importingFolder(engine::referenceImportTarget(refDir, outDir));
        std::vector<std::string> files;
        for (const char* f : {"run.h5", "run.h5.partial", "run.h5.lock", "analysis.h5",
                              "analysis.h5.partial", "analysis.h5.lock"})
            files.push_back(tmp + "/" + f);
        guardUnfinished(files, tmp);
    } catch (const std::exception&) {
        guardUnfinished({}, {});  // an invalid config.yaml: the import fails before writing
    }
}

// A folder argument, or the folder of a state.pt / config.yaml given instead.
std::string runFolderOf(const std::string& p)
{
    std::error_code ec;
    const fs::path path(p);
    const auto name = path.filename().string();
    if (fs::is_regular_file(path, ec) && (name == "state.pt" || name == "config.yaml"))
        return path.parent_path().empty() ? std::string(".") : path.parent_path().string();
    return p;
}

}  // namespace

int runImportRun(const ImportRunArgs& args)
{
    // Every argument is a run folder or a tree of them (the reference's models/ folder).
    std::vector<std::pair<std::string, bool>> runs;  // folder, found in a tree
    for (const auto& arg : args.paths) {
        const std::string p = runFolderOf(arg);
        std::error_code ec;
        if (!fs::is_directory(p, ec))
            throw engine::Error(engine::ErrorKind::RunFile, p + ": no such folder");
        if (engine::isReferenceRunDir(p)) {
            runs.emplace_back(p, false);
            continue;
        }
        const auto found = engine::findReferenceRuns(p);
        if (found.empty())
            throw engine::Error(engine::ErrorKind::RunFile,
                                p + ": not a reference run folder (no config.yaml and state.pt) "
                                    "and none below it");
        for (const auto& f : found)
            runs.emplace_back(f, true);
    }
    // One bad run does not stop the others; the exit code is the first failure's.
    int imported = 0, skipped = 0, failed = 0, firstCode = 0;
    for (const auto& [dir, inTree] : runs) {
        // In a tree, runs imported before are skipped; a run named directly must be new.
        if (inTree && engine::isReferenceRunImported(dir, args.outDir)) {
            ++skipped;
            if (!args.quiet)
                std::fprintf(stderr, "%s: already imported\n", dir.c_str());
            continue;
        }
        engine::ReferenceImportOptions o;
        o.outDir = args.outDir;
        o.metrics = args.metrics;
        try {
            guardImport(dir, args.outDir);
            const auto r = engine::importReferenceRun(dir, o);
            guardUnfinished({}, {});
            ++imported;
            if (!args.quiet) {
                std::fprintf(stderr, "%s: imported, %lld steps, optimizer state %s", dir.c_str(),
                             static_cast<long long>(r.stepsDone),
                             r.optimizerImported ? "included" : "not included");
                if (!r.importedMethods.empty())
                    std::fprintf(stderr, ", %zu evaluation methods from metrics.json",
                                 r.importedMethods.size());
                std::fprintf(stderr, "\n");
                for (const auto& n : r.notes)
                    std::fprintf(stderr, "  note: %s\n", n.c_str());
            }
            std::printf("%s\n", r.runFile.c_str());
        } catch (const engine::Error& e) {
            guardUnfinished({}, {});
            ++failed;
            if (!firstCode)
                firstCode = engine::exitCodeFor(e.kind());
            std::fprintf(stderr, "lengen: error: %s\n", e.what());
            if (!e.detail().empty())
                std::fprintf(stderr, "  (%s)\n", e.detail().c_str());
        }
    }
    if (runs.size() > 1 && !args.quiet)
        std::fprintf(stderr, "%d run(s) imported, %d already present, %d failed\n", imported,
                     skipped, failed);
    return firstCode;
}

int runExportRun(const ExportRunArgs& args)
{
    if (args.format != "pytorch")
        throw engine::Error(engine::ErrorKind::Usage,
                            "unknown --format '" + args.format + "' (only 'pytorch')");
    guardUnfinished({args.outDir + "/state.pt.partial", args.outDir + "/config.yaml.partial"}, {});
    const auto r = engine::exportReferenceRun(args.run, args.outDir);
    guardUnfinished({}, {});
    if (!args.quiet)
        for (const auto& n : r.notes)
            std::fprintf(stderr, "note: %s\n", n.c_str());
    std::printf("%s\n", r.dir.c_str());
    return 0;
}

void addReferenceCommands(CLI::App& app, CommandTable& table)
{
    auto in = std::make_shared<ImportRunArgs>();
    auto* importRun = app.add_subcommand(
        "import-run", "Import runs of the reference's Python code (config.yaml + state.pt "
                      "[+ metrics.json]) as LenGen runs");
    importRun
        ->add_option("folders", in->paths,
                     "Reference run folders, or a models/ tree "
                     "holding them")
        ->required();
    importRun->add_option("--out", in->outDir, "Root folder for the imported runs")
        ->capture_default_str();
    importRun->add_flag("!--no-metrics", in->metrics, "Do not import metrics.json");
    addQuietFlag(importRun, in->quiet);
    table.add(importRun, [in](const Session&) { return runImportRun(*in); });

    auto out = std::make_shared<ExportRunArgs>();
    auto* exportRun = app.add_subcommand(
        "export-run", "Write a run as a reference run folder (config.yaml + state.pt) for the "
                      "Python code");
    exportRun->add_option("run", out->run, "Run folder or run.h5")->required();
    exportRun->add_option("--format", out->format, "pytorch")->capture_default_str();
    exportRun->add_option("--out", out->outDir, "Folder to write")->required();
    addQuietFlag(exportRun, out->quiet);
    table.add(exportRun, [out](const Session&) { return runExportRun(*out); });
}

}  // namespace lengen::cli
