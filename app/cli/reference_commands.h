#pragma once
// `lengen import-run`, `lengen export-run`: runs of the reference's Python code in and out
// (docs/reference-runs.md).

#include <string>
#include <vector>

namespace lengen::cli {

struct ImportRunArgs {
    std::vector<std::string> paths;  ///< reference run folders, or trees holding them
    std::string outDir = "runs";
    bool metrics = true;
    bool quiet = false;
};

int runImportRun(const ImportRunArgs& args);

struct ExportRunArgs {
    std::string run;
    std::string format = "pytorch";
    std::string outDir;
    bool quiet = false;
};

int runExportRun(const ExportRunArgs& args);

}  // namespace lengen::cli
