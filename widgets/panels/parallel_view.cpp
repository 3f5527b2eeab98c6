#include "parallel_view.h"

#include <QElapsedTimer>
#include <QMouseEvent>
#include <QPainter>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <cmath>

namespace lengen::ui {

namespace {
constexpr double kGrab = 12;  // pixels either side of an axis that start a brush
}

ParallelView::ParallelView(QWidget* parent) : QWidget(parent)
{
    setMinimumSize(480, 260);
    setMouseTracking(false);
    setCursor(Qt::CrossCursor);
    setToolTip(tr("Drag along an axis to keep the runs inside that range; click a brushed axis "
                  "to remove its brush."));
    connect(&m_worker, &QFutureWatcher<Rendered>::finished, this, [this] {
        m_rendering = false;
        const auto r = m_worker.result();
        m_image = r.image;
        m_renderMs = r.ms;
        if (m_renderAgain)
            startRender();
        update();
        if (!m_rendering)
            Q_EMIT rendered();
    });
}

void ParallelView::setSpec(plots::ParallelSpec spec)
{
    m_spec = std::move(spec);
    m_dragAxis = -1;
    brushesChanged();
}

void ParallelView::clearBrushes()
{
    if (m_spec.brushes.empty())
        return;
    m_spec.brushes.clear();
    brushesChanged();
    Q_EMIT brushFinished();
}

void ParallelView::setBrush(int axis, double low, double high, bool finished)
{
    auto& b = m_spec.brushes;
    b.erase(std::remove_if(b.begin(), b.end(), [&](const auto& x) { return x.axis == axis; }),
            b.end());
    b.push_back({axis, std::min(low, high), std::max(low, high)});
    brushesChanged();
    Q_EMIT brushMoved();
    if (finished)
        Q_EMIT brushFinished();
}

void ParallelView::brushesChanged()
{
    m_inside = plots::rowsInside(m_spec);
    m_insideCount = int(std::count(m_inside.begin(), m_inside.end(), char(1)));
    requestRender();
    update();  // the brushes' boxes at once, over the image there is
}

void ParallelView::requestRender()
{
    if (m_rendering)
        m_renderAgain = true;
    else
        startRender();
}

void ParallelView::startRender()
{
    m_rendering = true;
    m_renderAgain = false;
    // What the worker needs, by value: the rows' values and axes (not their names), which rows
    // are inside, the size. The GUI thread copies about 0.7 MB at 10,000 runs.
    plots::ParallelSpec spec;
    spec.title = m_spec.title;
    spec.axes = m_spec.axes;
    spec.values = m_spec.values;
    spec.colorAxis = m_spec.colorAxis;
    const auto inside = m_inside;
    const qreal dpr = devicePixelRatioF();
    const QSize size = this->size();
    m_worker.setFuture(QtConcurrent::run([spec = std::move(spec), inside, dpr, size] {
        QElapsedTimer timer;
        timer.start();
        Rendered r;
        r.image = QImage((QSizeF(size) * dpr).toSize(), QImage::Format_ARGB32_Premultiplied);
        r.image.setDevicePixelRatio(dpr);
        QPainter p(&r.image);
        plots::paintParallel(p, QRectF(QPointF(0, 0), QSizeF(size)), spec, inside, false);
        p.end();
        r.ms = double(timer.nsecsElapsed()) / 1e6;
        return r;
    }));
}

plots::ParallelLayout ParallelView::layout() const
{
    return plots::parallelLayout(m_spec, QRectF(rect()));
}

double ParallelView::axisX(int axis) const { return layout().x.at(size_t(axis)); }

double ParallelView::fractionY(double f) const { return layout().yAt(f); }

int ParallelView::axisNear(double x) const
{
    const auto l = layout();
    for (size_t a = 0; a < l.x.size(); ++a)
        if (std::fabs(l.x[a] - x) <= kGrab)
            return int(a);
    return -1;
}

void ParallelView::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    if (m_image.isNull())
        p.fillRect(rect(), Qt::white);
    else
        p.drawImage(0, 0, m_image);  // a resize draws again; until then, the last image
    plots::paintParallelBrushes(p, QRectF(rect()), m_spec);
}

void ParallelView::resizeEvent(QResizeEvent*) { requestRender(); }

void ParallelView::mousePressEvent(QMouseEvent* e)
{
    const auto l = layout();
    const double y = e->position().y();
    m_dragAxis = -1;
    if (e->button() != Qt::LeftButton || y < l.plot.top() - 6 || y > l.plot.bottom() + 6)
        return;
    m_dragAxis = axisNear(e->position().x());
    m_dragFrom = std::clamp(l.fractionAt(y), 0.0, 1.0);
    m_dragged = false;
}

void ParallelView::mouseMoveEvent(QMouseEvent* e)
{
    if (m_dragAxis < 0)
        return;
    const auto l = layout();
    const double f = std::clamp(l.fractionAt(e->position().y()), 0.0, 1.0);
    if (!m_dragged && std::fabs(f - m_dragFrom) * l.plot.height() < 3)
        return;
    m_dragged = true;
    const auto& axis = m_spec.axes.at(size_t(m_dragAxis));
    setBrush(m_dragAxis, plots::axisValue(axis, std::min(f, m_dragFrom)),
             plots::axisValue(axis, std::max(f, m_dragFrom)), false);
}

void ParallelView::mouseReleaseEvent(QMouseEvent*)
{
    if (m_dragAxis < 0)
        return;
    const int axis = m_dragAxis;
    m_dragAxis = -1;
    if (m_dragged) {
        Q_EMIT brushFinished();
        return;
    }
    // A click: removes the axis's brush, if it has one.
    auto& b = m_spec.brushes;
    const auto before = b.size();
    b.erase(std::remove_if(b.begin(), b.end(), [&](const auto& x) { return x.axis == axis; }),
            b.end());
    if (b.size() != before) {
        brushesChanged();
        Q_EMIT brushFinished();
    }
}

}  // namespace lengen::ui
