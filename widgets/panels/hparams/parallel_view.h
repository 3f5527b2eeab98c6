#pragma once
// Parallel coordinates on screen (issue 55): paintParallel into an image kept between frames,
// redrawn only when the rows, the size or a brush changed, and off the GUI thread: 10,000 runs
// take about 40 ms to draw, which a worker spends while the GUI thread only copies the latest
// image and draws the brushes' boxes over it (so they follow the mouse at once). A change while
// a drawing is under way draws again once it ends: the image is at most one drawing behind.
// Drag along an axis to brush it (the rows whose value lies in the range stay coloured, the
// others turn grey); a click on a brushed axis without dragging removes its brush. GUI thread.

#include <QImage>
#include <QWidget>

#include <utility>
#include <vector>

#include "latest_only.h"
#include "parallel_coords.h"

class QPainter;

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
    /// The row whose line passes nearest `pos` (within 6 px), -1 for none: what hovering names.
    int rowAt(QPointF pos) const;
    int hoveredRow() const { return m_hover; }
    /// While an axis's name is dragged: the axis it is dragged (-1: none) and the one it would
    /// take the place of if dropped now, which the view marks (issue 80, defect 24: nothing
    /// showed until the drop).
    std::pair<int, int> axisMove() const { return {m_movingAxis, m_moveOnto}; }
    /// A row's run and its value on every axis (the hover's tooltip, rich text).
    QString rowText(int row) const;
    /// Draws row `row` over the others (the table's selected run); -1 for none.
    void setHighlight(int row);
    /// How long the worker took to draw the last image, in ms (the benchmark reads it).
    double lastRenderMs() const { return m_renderMs; }
    /// Whether the image shows the current rows, brushes and size (no drawing under way or due).
    bool imageCurrent() const { return m_imageCurrent && !m_image.isNull(); }

    struct Rendered {
        QImage image;
        double ms = 0;
    };

Q_SIGNALS:
    /// The brushes moved (while dragging: at most once a frame).
    void brushMoved();
    /// A drag ended, or a brush was removed: the set of rows inside is final.
    void brushFinished();
    /// The worker delivered an image of the current state.
    void rendered();
    /// An axis's name was dragged onto another axis (issue 72): move `name` to `onto`'s place.
    void axisMoveRequested(QString name, QString onto);

protected:
    bool event(QEvent* event) override;
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    /// Whether a press at `pos` grabs an axis's name (above the plot) to move the axis.
    int nameAt(QPointF pos) const;

private:
    void brushesChanged();
    void requestRender();
    /// The axis nearest `x` within `within` pixels (-1: none): a brush, a name, a drop.
    int axisNear(double x, double within) const;
    plots::ParallelLayout layout() const;

    plots::ParallelSpec m_spec;
    std::vector<char> m_inside;
    int m_insideCount = 0;
    QImage m_image;  // the latest image the worker drew (without the brushes' boxes)
    double m_renderMs = 0;
    bool m_imageCurrent = false;    // no render was asked for since m_image's
    LatestOnly<Rendered> m_render;  // the image is drawn off the GUI thread, the latest state's
    int m_hover = -1, m_highlight = -1;  // rows drawn over the others
    int m_dragAxis = -1;                 // the axis being brushed
    double m_dragFrom = 0;               // where the drag started, as a fraction of the axis
    bool m_dragged = false;              // moved beyond a click
    void paintAxisMove(QPainter& p) const;
    int m_movingAxis = -1;  // the axis whose name is dragged to reorder
    int m_moveOnto = -1;    // the axis it would take the place of, dropped now
    QPointF m_movePos;      // where the pointer is while it is dragged
};

}  // namespace lengen::ui
