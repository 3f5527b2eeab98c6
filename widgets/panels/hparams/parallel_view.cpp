#include "parallel_view.h"
#include "category_colors.h"

#include <QElapsedTimer>
#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "figure_builder.h"

namespace lengen::ui {

namespace {
constexpr double kGrab = 12;  // pixels either side of an axis that start a brush
}

ParallelView::ParallelView(QWidget* parent)
    : QWidget(parent), m_render(this, [this](Rendered r, bool latest) {
          m_image = std::move(r.image);
          m_renderMs = r.ms;
          m_imageCurrent = latest;
          update();
          if (latest)
              Q_EMIT rendered();
      })
{
    setMinimumSize(480, 260);
    setMouseTracking(true);  // the run under the cursor is named and drawn over the others
    setCursor(Qt::CrossCursor);
    setToolTip(tr("Drag along an axis to keep the runs inside that range; click a brushed axis "
                  "to remove its brush. Point at a line to name its run."));
}

void ParallelView::setSpec(plots::ParallelSpec spec)
{
    // A drag under way goes on along its axis, wherever the axis is now (issue 70, defect 6:
    // runs landing mid-drag rebuilt the plot and dropped it, leaving a tiny brush or none).
    const std::string dragging = m_dragAxis >= 0 && size_t(m_dragAxis) < m_spec.axes.size()
                                     ? m_spec.axes[size_t(m_dragAxis)].name
                                     : std::string();
    m_spec = std::move(spec);
    // A category colours its runs as its value is coloured everywhere (Compare's group of
    // that name; issue 80, defect 23): looked up here, on the GUI thread that owns the table.
    for (auto& axis : m_spec.axes) {
        axis.categoryColors.clear();
        if (axis.categorical && int(&axis - m_spec.axes.data()) == m_spec.colorAxis)
            for (const auto& c : axis.categories)
                axis.categoryColors.push_back(figures::categoryColor(c));
    }
    m_hover = m_highlight = -1;
    m_dragAxis = -1;
    for (size_t a = 0; a < m_spec.axes.size() && !dragging.empty(); ++a)
        if (m_spec.axes[a].name == dragging)
            m_dragAxis = int(a);
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
    b.push_back(plots::snappedBrush(m_spec, {axis, std::min(low, high), std::max(low, high)}));
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
    m_imageCurrent = false;
    // What the worker needs, by value: the rows' values and axes (not their names), which rows
    // are inside, the size. The GUI thread copies about 0.7 MB at 10,000 runs.
    plots::ParallelSpec spec;
    spec.title = m_spec.title;
    spec.axes = m_spec.axes;
    spec.values = m_spec.values;
    spec.colorAxis = m_spec.colorAxis;
    m_render.submit([spec = std::move(spec), inside = m_inside, dpr = devicePixelRatioF(),
                     size = this->size()] {
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
    });
}

plots::ParallelLayout ParallelView::layout() const
{
    return plots::parallelLayout(m_spec, QRectF(rect()));
}

double ParallelView::axisX(int axis) const { return layout().x.at(size_t(axis)); }

double ParallelView::fractionY(double f) const { return layout().yAt(f); }

int ParallelView::axisNear(double x, double within) const
{
    const auto l = layout();
    int nearest = -1;
    double best = within;
    for (size_t a = 0; a < l.x.size(); ++a)
        if (const double d = std::fabs(l.x[a] - x); d <= best) {
            best = d;
            nearest = int(a);
        }
    return nearest;
}

void ParallelView::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    if (m_image.isNull())
        p.fillRect(rect(), Qt::white);
    else
        p.drawImage(0, 0, m_image);  // a resize draws again; until then, the last image
    plots::paintParallelBrushes(p, QRectF(rect()), m_spec);
    if (m_movingAxis >= 0)
        paintAxisMove(p);
    // The run under the cursor (or the table's selected row) over everything, as one line.
    const int row = m_hover >= 0 ? m_hover : m_highlight;
    if (row < 0 || row >= m_spec.rows())
        return;
    const auto l = layout();
    p.setRenderHint(QPainter::Antialiasing);
    QPolygonF line;
    for (size_t a = 0; a < m_spec.axes.size(); ++a) {
        const double f = plots::axisFraction(m_spec.axes[a], m_spec.value(row, int(a)));
        if (std::isfinite(f)) {
            line << QPointF(l.x[a], l.yAt(f));
        } else if (!line.isEmpty()) {  // a gap ends the piece before it
            p.setPen(QPen(QColor(0xC4, 0x4E, 0x52), 2.5));
            p.drawPolyline(line);
            line.clear();
        }
    }
    p.setPen(QPen(QColor(0xC4, 0x4E, 0x52), 2.5));
    p.drawPolyline(line);
}

// An axis's name being dragged: a band over the axis whose place it would take, and the name
// at the pointer, so the drop is no surprise.
void ParallelView::paintAxisMove(QPainter& p) const
{
    const auto l = layout();
    if (m_movingAxis >= int(m_spec.axes.size()))
        return;
    const QColor accent(0x01, 0x73, 0xB2);
    if (m_moveOnto >= 0 && m_moveOnto != m_movingAxis && size_t(m_moveOnto) < l.x.size()) {
        const double x = l.x[size_t(m_moveOnto)];
        QColor band = accent;
        band.setAlpha(48);
        p.fillRect(QRectF(x - 10, l.plot.top() - 40, 20, l.plot.height() + 46), band);
        p.setPen(QPen(accent, 2, Qt::DashLine));
        p.drawLine(QPointF(x, l.plot.top() - 40), QPointF(x, l.plot.bottom()));
    }
    const QString name = QString::fromStdString(m_spec.axes[size_t(m_movingAxis)].name);
    const QFontMetricsF fm(font());
    const QRectF box(m_movePos + QPointF(12, -fm.height() - 4),
                     QSizeF(fm.horizontalAdvance(name) + 12, fm.height() + 4));
    p.setPen(QPen(accent, 1));
    p.setBrush(QColor(255, 255, 255, 230));
    p.drawRoundedRect(box, 3, 3);
    p.setPen(accent.darker(130));
    p.drawText(box, Qt::AlignCenter, name);
}

int ParallelView::rowAt(QPointF pos) const
{
    // Between the two axes around the cursor, the row whose line passes nearest it (within
    // 6 px); rows inside the brushes first, as they are drawn on top.
    const auto l = layout();
    if (l.x.size() < 2 || pos.x() < l.x.front() || pos.x() > l.x.back())
        return -1;
    size_t a = 0;
    while (a + 2 < l.x.size() && pos.x() > l.x[a + 1])
        ++a;
    const double t = (pos.x() - l.x[a]) / (l.x[a + 1] - l.x[a]);
    int best = -1;
    double bestDistance = 6;
    bool bestInside = false;
    for (int r = 0; r < m_spec.rows(); ++r) {
        const double f0 = plots::axisFraction(m_spec.axes[a], m_spec.value(r, int(a)));
        const double f1 = plots::axisFraction(m_spec.axes[a + 1], m_spec.value(r, int(a) + 1));
        if (!std::isfinite(f0) || !std::isfinite(f1))
            continue;
        const double d = std::fabs(l.yAt(f0 + t * (f1 - f0)) - pos.y());
        const bool inside = m_inside[size_t(r)];
        if ((inside && !bestInside && d <= 6) || (inside == bestInside && d < bestDistance)) {
            best = r;
            bestDistance = d;
            bestInside = inside;
        }
    }
    return best;
}

QString ParallelView::rowText(int row) const
{
    if (row < 0 || row >= m_spec.rows())
        return {};
    QStringList lines;
    if (size_t(row) < m_spec.rowNames.size())
        lines << QStringLiteral("<b>%1</b>")
                     .arg(QString::fromStdString(m_spec.rowNames[size_t(row)]).toHtmlEscaped());
    for (size_t a = 0; a < m_spec.axes.size(); ++a) {
        const auto& axis = m_spec.axes[a];
        const double v = m_spec.value(row, int(a));
        QString text = QStringLiteral("—");
        if (std::isfinite(v))
            text = axis.categorical && size_t(v) < axis.categories.size()
                       ? QString::fromStdString(axis.categories[size_t(v)])
                       : QString::number(v, 'g', 4);
        lines << QStringLiteral("%1: %2").arg(QString::fromStdString(axis.name).toHtmlEscaped(),
                                              text.toHtmlEscaped());
    }
    return lines.join(QStringLiteral("<br>"));
}

bool ParallelView::event(QEvent* e)
{
    // The tooltip names the run under the cursor; elsewhere it says how to brush.
    if (e->type() == QEvent::ToolTip) {
        const auto* help = static_cast<QHelpEvent*>(e);
        const int row = rowAt(help->pos());
        QToolTip::showText(help->globalPos(), row >= 0 ? rowText(row) : toolTip(), this);
        return true;
    }
    return QWidget::event(e);
}

void ParallelView::setHighlight(int row)
{
    m_highlight = row;
    update();
}

void ParallelView::resizeEvent(QResizeEvent*) { requestRender(); }

int ParallelView::nameAt(QPointF pos) const
{
    // The names sit in the band above the plot; the nearest axis within half the spacing.
    const auto l = layout();
    if (l.x.size() < 2 || pos.y() >= l.plot.top() - 6 || pos.y() < l.plot.top() - 60)
        return -1;
    return axisNear(pos.x(), (l.x[1] - l.x[0]) / 2);
}

void ParallelView::mousePressEvent(QMouseEvent* e)
{
    const auto l = layout();
    const double y = e->position().y();
    m_dragAxis = -1;
    m_movingAxis = e->button() == Qt::LeftButton ? nameAt(e->position()) : -1;
    if (m_movingAxis >= 0) {  // an axis's name: dragged onto another axis, it moves there
        setCursor(Qt::ClosedHandCursor);
        m_moveOnto = m_movingAxis;
        m_movePos = e->position();
        update();
        return;
    }
    if (e->button() != Qt::LeftButton || y < l.plot.top() - 6 || y > l.plot.bottom() + 6)
        return;
    m_dragAxis = axisNear(e->position().x(), kGrab);
    if (m_dragAxis < 0)  // on a category's name ("RoPE"), left of its axis: that axis
        m_dragAxis = plots::categoryLabelAxis(l, m_spec, e->position());
    m_dragFrom = std::clamp(l.fractionAt(y), 0.0, 1.0);
    m_dragged = false;
}

void ParallelView::mouseMoveEvent(QMouseEvent* e)
{
    if (m_movingAxis >= 0) {  // the place it would take, marked as the pointer moves
        m_moveOnto = axisNear(e->position().x(), std::numeric_limits<double>::infinity());
        m_movePos = e->position();
        update();
        return;
    }
    if (m_dragAxis < 0) {  // hovering: name the run under the cursor
        const int row = e->buttons() == Qt::NoButton ? rowAt(e->position()) : -1;
        if (row != m_hover) {
            m_hover = row;
            update();
            if (row >= 0 && QToolTip::isVisible())  // a tooltip up follows the cursor's run
                QToolTip::showText(e->globalPosition().toPoint(), rowText(row), this);
        }
        return;
    }
    const auto l = layout();
    const double f = std::clamp(l.fractionAt(e->position().y()), 0.0, 1.0);
    if (!m_dragged && std::fabs(f - m_dragFrom) * l.plot.height() < 3)
        return;
    m_dragged = true;
    const auto& axis = m_spec.axes.at(size_t(m_dragAxis));
    setBrush(m_dragAxis, plots::axisValue(axis, std::min(f, m_dragFrom)),
             plots::axisValue(axis, std::max(f, m_dragFrom)), false);
}

void ParallelView::mouseReleaseEvent(QMouseEvent* e)
{
    if (m_movingAxis >= 0) {
        const int from = std::exchange(m_movingAxis, -1);
        m_moveOnto = -1;
        unsetCursor();
        update();
        // Dropped anywhere over the figure: the axis nearest the pointer is the new place.
        const int onto = axisNear(e->position().x(), std::numeric_limits<double>::infinity());
        if (onto >= 0 && onto != from)
            Q_EMIT axisMoveRequested(QString::fromStdString(m_spec.axes[size_t(from)].name),
                                     QString::fromStdString(m_spec.axes[size_t(onto)].name));
        return;
    }
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
