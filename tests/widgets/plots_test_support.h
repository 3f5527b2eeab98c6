#pragma once
// What the plot tests share: an example regression figure (the reference's look: four curves,
// bands, the zero estimator, the training length) and where an example file is kept.

#include <QString>

#include <cmath>

#include "figure_spec.h"

namespace lengen::plots::testing {

inline FigureSpec regressionFigure()
{
    FigureSpec f;
    f.title = "Linear_regression - n_dim 20\nmax_data_points 40";
    f.x.label = "in-context examples";
    f.y.label = "squared error";
    f.y.min = -0.1;
    f.y.max = 30;
    const char* names[] = {"RoPE", "Least Squares", "3-Nearest, Neighbors", "the \"mean\""};
    for (int m = 0; m < 4; ++m) {
        Series s;
        s.name = names[m];
        for (int i = 0; i <= 320; ++i) {
            const double base = 20.0 * std::exp(-i / (8.0 + 6 * m));
            const double v = m == 0 ? base + (i > 40 ? 0.05 * (i - 40) : 0) : base + m + 0.1;
            s.x.push_back(i);
            s.y.push_back(v);
            if (m < 3) {  // the last one has no band
                s.bandLow.push_back(v - 0.8);
                s.bandHigh.push_back(v + 0.8);
            }
        }
        f.series.push_back(s);
    }
    f.hlines.push_back({20, "zero estimator"});
    f.spans.push_back({-1, 40, "#808080", 0.15, ""});
    f.vlines.push_back({40, "train length"});
    return f;
}

/// `name` in LENGEN_FIGURE_DIR when set (to look at), else in `tmp`.
inline QString keep(const QString& tmp, const QString& name)
{
    const QString dir = qEnvironmentVariable("LENGEN_FIGURE_DIR");
    return (dir.isEmpty() ? tmp : dir) + "/" + name;
}

}  // namespace lengen::plots::testing
