#pragma once
// Parallel coordinates on screen (issue 55): paintParallel into an image kept between frames,
// redrawn only when the rows, the size or a brush changed. Drag along an axis to brush it (the
// rows whose value lies in the range stay coloured, the others turn grey); a click on a brushed
// axis without dragging removes its brush. GUI thread.

#include <QImage>
#include <QWidget>

#include <vector>

#include "parallel_coords.h"

namespace lengen::ui {

class ParallelView final : public QWidget {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ParallelView)

public:
    explicit ParallelView(QWidget* parent = nullptr);

    /// New rows or axes; the brushes are the spec's.
    void setSpec(plots::ParallelSpec spec);
    const plots::ParallelSpec& spec() const { return m_spec; }
    /// For each row, whether it lies inside every brush (kept with the spec).
    const std::vector<char>& inside() const { return m_inside; }
    int insideCount() const { return m_insideCount; }
    void clearBrushes();
    /// The brush on `axis` as [low, high] in its data values (replacing one there), as a drag
    /// from `low` to `high` would leave it; finished says the drag ended (brushFinished).
    void setBrush(int axis, double low, double high, bool finished = true);

    /// Where axis `axis` is drawn, and the y of fraction f (0 bottom, 1 top) in widget pixels:
    /// what a test drags along.
    double axisX(int axis) const;
    double fractionY(double f) const;
    /// How long the last repaint of the image took, in ms (the benchmark reads it).
    double lastRenderMs() const { return m_renderMs; }

Q_SIGNALS:
    /// The brushes moved (while dragging: at most once a frame).
    void brushMoved();
    /// A drag ended, or a brush was removed: the set of rows inside is final.
    void brushFinished();

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;

private:
    void brushesChanged();
    int axisNear(double x) const;
    plots::ParallelLayout layout() const;

    plots::ParallelSpec m_spec;
    std::vector<char> m_inside;
    int m_insideCount = 0;
    QImage m_image;  // the figure at the widget's size; null = paint again
    double m_renderMs = 0;
    int m_dragAxis = -1;     // the axis being brushed
    double m_dragFrom = 0;   // where the drag started, as a fraction of the axis
    bool m_dragged = false;  // moved beyond a click
};

}  // namespace lengen::ui
