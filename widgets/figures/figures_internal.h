#pragma once
// Shared between the figure builders of lengen_figures (run_figures, attention_figures); not
// installed, not included outside this folder.

#include <string>
#include <vector>

#include "figure_spec.h"
#include "lengen/engine/config.h"
#include "lengen/engine/probes.h"
#include "lengen/engine/run_file.h"
#include "run_figures.h"

namespace lengen::figures {

/// What every figure of a run needs: its info and its resolved config.
struct RunFacts {
    engine::RunFileInfo info;
    engine::RunConfig config;
    /// The points the run last trained on (issue 52), the curriculum's end if it trained nothing.
    int trainedPoints() const
    {
        return info.reached.points > 0 ? info.reached.points : config.trainPoints();
    }
};

RunFacts facts(const std::string& run);

/// 0, scale, 2·scale, … (n values).
std::vector<double> positions(size_t n, double scale = 1);

/// One colour per intervention name ("#rrggbb"), the same in every figure (docs/interventions.md).
std::string interventionColor(const std::string& spec);

plots::FigureSpec attentionFigure(const engine::AttentionSetting& s, const RunFacts& rf);
plots::FigureSpec averageAttentionFigure(const engine::AttentionSetting& s, const RunFacts& rf);
plots::HeatmapSpec mapFigure(const std::string& run, const engine::AttentionSetting& s,
                             const MapSelection& m, const RunFacts& rf);

}  // namespace lengen::figures
