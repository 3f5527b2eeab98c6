#pragma once
// `lengen export`: figures of a run as PNG / SVG / PDF / CSV (docs/figures.md).

#include <string>
#include <vector>

namespace lengen::cli {

struct Session;

struct ExportArgs {
    std::string run;
    std::string figure;                ///< one figure by name
    bool all = false;                  ///< every available figure
    bool list = false;                 ///< print the available figures
    std::vector<std::string> formats;  ///< png, svg, pdf, csv, tex (default: from --out, else png)
    bool standalone = false;           ///< tex: a whole document pdflatex compiles alone
    std::string from;                  ///< rebuild the figure a provenance file describes
    bool noProvenance = false;         ///< write no <figure>.provenance.json
    std::string out;                   ///< file (one figure) or folder (--all)
    int dpi = 150;
    int prompt = 0, layer = -1, head = 0;      ///< attention maps
    bool logY = false, legendOutside = false;  ///< a line figure's view, as the studio's options
    std::string method;                        ///< a sweep's grid and table (default ood_length)
    bool quiet = false;
};

int runExport(const ExportArgs& args, const Session& session);

}  // namespace lengen::cli
