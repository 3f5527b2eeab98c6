#pragma once
// Geometric clipping for the SVG export. QSvgGenerator (Qt 6.4) writes no clip paths, so
// everything QCustomPlot leaves to the painter's clip rect (a curve above a fixed y range,
// a band below it, a span past the x range) would spill over the axes and the title in SVG.
// While a VectorClip lives, curves, bands and items of `plot` are cut to their axis rects;
// the destructor puts the original data and items back. Internal to lengen_plots.

#include "qcp.h"

#include <utility>
#include <vector>

namespace lengen::plots {

class VectorClip final {
public:
    /// `plot` must be laid out at the export size (replotted) already.
    explicit VectorClip(QCustomPlot& plot);
    ~VectorClip();
    VectorClip(const VectorClip&) = delete;
    VectorClip& operator=(const VectorClip&) = delete;

private:
    void clipGraphs();
    void clipItems();
    void replaceData(QCPGraph* graph, const QSharedPointer<QCPGraphDataContainer>& data);
    void movePosition(QCPItemPosition* position, double pixelX, double pixelY);

    struct SavedPosition {
        QCPItemPosition* position;
        double key, value;
    };

    QCustomPlot& m_plot;
    std::vector<std::pair<QCPGraph*, QSharedPointer<QCPGraphDataContainer>>> m_data;
    std::vector<SavedPosition> m_positions;
    std::vector<QCPAbstractItem*> m_hidden;
};

}  // namespace lengen::plots
