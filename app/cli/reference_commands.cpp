#include "reference_commands.h"

#include <cstdio>
#include <filesystem>

#include "lengen/engine/errors.h"
#include "lengen/engine/reference_runs.h"

namespace lengen::cli {

namespace fs = std::filesystem;

int runImportRun(const ImportRunArgs& args)
{
    // Every argument is a run folder or a tree of them (the reference's models/ folder).
    // A run named directly must be new; runs found in a tree may have been imported before.
    std::vector<std::pair<std::string, bool>> runs;  // folder, found in a tree
    for (const auto& p : args.paths) {
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
    int imported = 0, skipped = 0;
    bool searched = false;
    for (const auto& [dir, inTree] : runs) {
        searched = searched || inTree;
        engine::ReferenceImportOptions o;
        o.outDir = args.outDir;
        o.metrics = args.metrics;
        if (inTree) {
            std::error_code ec;
            const std::string target = engine::referenceImportTarget(dir, args.outDir);
            if (fs::exists(target, ec)) {
                ++skipped;
                if (!args.quiet)
                    std::fprintf(stderr, "%s: already imported as %s\n", dir.c_str(),
                                 target.c_str());
                continue;
            }
        }
        const auto r = engine::importReferenceRun(dir, o);
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
    }
    if (searched && !args.quiet)
        std::fprintf(stderr, "%d run(s) imported, %d already present\n", imported, skipped);
    return 0;
}

int runExportRun(const ExportRunArgs& args)
{
    if (args.format != "pytorch")
        throw engine::Error(engine::ErrorKind::Usage, "unknown --format '" + args.format +
                                                          "' (only 'pytorch')");
    const auto r = engine::exportReferenceRun(args.run, args.outDir);
    if (!args.quiet)
        for (const auto& n : r.notes)
            std::fprintf(stderr, "note: %s\n", n.c_str());
    std::printf("%s\n", r.dir.c_str());
    return 0;
}

}  // namespace lengen::cli
