#include "attention_view.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSpinBox>
#include <QStackedLayout>
#include <QTimer>
#include <QVBoxLayout>

#include <cmath>
#include <tuple>

#include "export_dialog.h"
#include "figure_builder.h"
#include "figure_export.h"
#include "qcp.h"
#include "run_figures.h"

namespace lengen::ui {

namespace {
QString kHoverHint() { return AttentionView::tr("Hover over the map for query, key and weight."); }
}  // namespace

AttentionView::AttentionView(QWidget* parent) : QWidget(parent)
{
    m_setting = new QComboBox;
    m_prompt = new QSpinBox;
    m_layer = new QSpinBox;
    m_head = new QSpinBox;
    m_log = new QCheckBox(tr("log colour scale"));
    m_fit = new QCheckBox(tr("fit colours to view"));
    m_fit->setChecked(true);
    m_fit->setToolTip(tr("Colour range from the visible cells; off: the fixed 0–1 range (log: 1e-4–1)"));
    m_log->setChecked(true);
    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Prompt length:")));
    bar->addWidget(m_setting, 1);
    for (auto [label, box] : {std::pair{tr("prompt"), m_prompt}, {tr("layer"), m_layer}, {tr("head"), m_head}}) {
        bar->addWidget(new QLabel(label));
        bar->addWidget(box);
    }
    bar->addWidget(m_log);
    bar->addWidget(m_fit);
    auto* exportButton = new QPushButton(tr("Export…"));
    exportButton->setToolTip(tr("The loaded tile: PNG, SVG, PDF, or CSV of its cells"));
    bar->addWidget(exportButton);
    connect(exportButton, &QPushButton::clicked, this, [this] {
        if (!m_heatmap) {  // never the previous run's map: this run has none to export
            QMessageBox::information(this, tr("Export attention map"),
                                     tr("Nothing to export: no attention map is shown for this run."));
            return;
        }
        const auto target = askExportTarget(this, tr("Export attention map"), QStringLiteral("attention_map.png"));
        QString error;
        if (target)
            reportExport(this, exportTo(target->path, target->dpi, &error), error);
    });
    m_plot = new QCustomPlot;
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    m_plot->setMouseTracking(true);
    m_readout = new QLabel(kHoverHint());
    m_empty = new QLabel(tr("No attention maps stored for this run.\nRun the attention probe "
                            "(Analysis ▸ Probe) to compute them."));
    m_empty->setAlignment(Qt::AlignCenter);
    auto* stack = new QStackedLayout;
    stack->addWidget(m_empty);
    stack->addWidget(m_plot);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addLayout(stack, 1);
    layout->addWidget(m_readout);
    m_reload = new QTimer(this);
    m_reload->setSingleShot(true);
    m_reload->setInterval(150);  // after a pan or zoom settles
    connect(m_reload, &QTimer::timeout, this, &AttentionView::loadVisibleTile);
    connect(m_setting, &QComboBox::currentIndexChanged, this, &AttentionView::onSelection);
    for (auto* box : {m_prompt, m_layer, m_head})
        connect(box, &QSpinBox::valueChanged, this, [this] { loadVisibleTile(); });
    connect(m_log, &QCheckBox::toggled, this, [this] { loadVisibleTile(); });
    connect(m_fit, &QCheckBox::toggled, this, [this] { loadVisibleTile(); });
    connect(m_plot, &QCustomPlot::mouseMove, this, &AttentionView::onHover);
    connect(m_plot, &QCustomPlot::mouseRelease, this, [this] { m_reload->start(); });
    connect(m_plot, &QCustomPlot::mouseWheel, this, [this] { m_reload->start(); });
    connect(this, &AttentionView::statusMessage, this, [stack, this] {
        stack->setCurrentIndex(m_tokens > 0 ? 1 : 0);
    });
}

void AttentionView::setRun(const QString& runFile)
{
    m_run = runFile;
    m_settings.clear();
    const QSignalBlocker block(m_setting);
    m_setting->clear();
    try {
        if (!runFile.isEmpty())
            for (const auto& s : engine::readAttentionSettings(runFile.toStdString()))
                if (s.mapPrompts > 0) {
                    m_settings.push_back(s);
                    m_setting->addItem(QStringLiteral("%1 (%2 tokens)")
                                           .arg(QString::fromStdString(s.name))
                                           .arg(s.tokens));
                }
    } catch (const std::exception& e) {
        Q_EMIT statusMessage(QString::fromUtf8(e.what()));
    }
    onSelection();
}

void AttentionView::onSelection()
{
    const int i = m_setting->currentIndex();
    m_readout->setText(kHoverHint());  // the read-out described the previous map
    if (i < 0 || size_t(i) >= m_settings.size()) {
        // Nothing of the previous run may stay: its tile, its cells (export), its plot.
        m_tokens = 0;
        m_heatmap.reset();
        m_tile = QRect();
        m_plot->clearPlottables();
        m_plot->replot();
        Q_EMIT statusMessage(QString());
        return;
    }
    const auto& s = m_settings[size_t(i)];
    m_tokens = s.tokens;
    // Prompts and heads count from 0, layers from 1: the reference's labels ("Head 0",
    // "Layer 3"), which the figure titles repeat.
    for (auto [box, first, count] : {std::tuple{m_prompt, 0, s.mapPrompts}, {m_layer, 1, s.layers}, {m_head, 0, s.heads}}) {
        const QSignalBlocker block(box);
        box->setRange(first, first + count - 1);
    }
    {
        const QSignalBlocker block(m_layer);
        m_layer->setValue(s.layers);
    }
    showWindow(0, 0, std::min(m_tokens, kMaxTile));
}

void AttentionView::showWindow(int firstRow, int firstCol, int size)
{
    m_tile = QRect(firstCol, firstRow, size, size);
    m_plot->xAxis->setRange(firstCol - 0.5, firstCol + size - 0.5);
    m_plot->yAxis->setRange(firstRow - 0.5, firstRow + size - 0.5);
    loadVisibleTile();
}

void AttentionView::loadVisibleTile()
{
    if (m_tokens <= 0 || m_run.isEmpty())
        return;
    m_readout->setText(kHoverHint());  // another layer, head, prompt or window
    // The visible window (after pan/zoom), clamped to the map and to kMaxTile per side.
    auto* rect = m_plot->axisRect();
    const auto xr = rect ? rect->axis(QCPAxis::atBottom)->range() : QCPRange(0, m_tokens);
    const auto yr = rect ? rect->axis(QCPAxis::atLeft)->range() : QCPRange(0, m_tokens);
    auto clampRange = [&](const QCPRange& r) {
        int a = std::clamp(int(std::floor(r.lower + 0.5)), 0, m_tokens - 1);
        int b = std::clamp(int(std::ceil(r.upper + 0.5)), a + 1, m_tokens);
        if (b - a > kMaxTile)
            b = a + kMaxTile;
        return std::pair{a, b};
    };
    const auto [c0, c1] = clampRange(xr);
    const auto [r0, r1] = clampRange(yr);
    figures::MapSelection m;
    m.prompt = m_prompt->value();
    m.layer = m_layer->value() - 1;
    m.head = m_head->value();
    m.r0 = r0;
    m.r1 = r1;
    m.c0 = c0;
    m.c1 = c1;
    try {
        const auto& s = m_settings.at(size_t(m_setting->currentIndex()));
        auto fig = figures::makeFigure(m_run.toStdString(), "attention_map/" + s.name, m);
        fig.heatmap->logScale = m_log->isChecked();
        if (m_fit->isChecked()) {  // the visible tile's own range (a long map sits near 1/T)
            fig.heatmap->zMin.reset();
            fig.heatmap->zMax.reset();
        } else if (!fig.heatmap->logScale) {
            fig.heatmap->zMin = 0.0;
        }
        plots::buildHeatmap(*m_plot, *fig.heatmap);
        m_heatmap = fig.heatmap;
        // Keep the user's view (buildHeatmap fits the axes to the tile).
        m_plot->axisRect()->axis(QCPAxis::atBottom)->setRange(xr);
        m_plot->axisRect()->axis(QCPAxis::atLeft)->setRange(yr);
        m_plot->replot(QCustomPlot::rpQueuedReplot);
        m_tile = QRect(c0, r0, c1 - c0, r1 - r0);
        Q_EMIT statusMessage(tr("Attention map: queries %1–%2, keys %3–%4 loaded")
                                 .arg(r0).arg(r1 - 1).arg(c0).arg(c1 - 1));
    } catch (const std::exception& e) {
        Q_EMIT statusMessage(QString::fromUtf8(e.what()));
    }
}

QString AttentionView::readout() const { return m_readout->text(); }

bool AttentionView::exportTo(const QString& path, int dpi, QString* error)
{
    if (!m_heatmap) {
        if (error)
            *error = tr("no attention map loaded");
        return false;
    }
    const auto format = plots::formatFromPath(path).value_or(plots::Format::Png);
    const auto result = plots::exportHeatmap(*m_heatmap, path, format, dpi);
    if (!result.ok && error)
        *error = result.error;
    return result.ok;
}

void AttentionView::onHover(QMouseEvent* event)
{
    auto* rect = m_plot->axisRect();
    if (!rect || m_tokens <= 0)
        return;
    const int key = int(std::lround(rect->axis(QCPAxis::atBottom)->pixelToCoord(event->pos().x())));
    const int query = int(std::lround(rect->axis(QCPAxis::atLeft)->pixelToCoord(event->pos().y())));
    if (!m_tile.contains(key, query))
        return;
    for (int i = 0; i < m_plot->plottableCount(); ++i)
        if (auto* map = qobject_cast<QCPColorMap*>(m_plot->plottable(i))) {
            int ci = 0, ri = 0;
            map->data()->coordToCell(key, query, &ci, &ri);
            const double w = map->data()->cell(ci, ri);
            m_readout->setText(tr("query %1 (%2) → key %3 (%4): weight %5")
                                   .arg(query).arg(QString::fromStdString(figures::tokenLabel(query)))
                                   .arg(key).arg(QString::fromStdString(figures::tokenLabel(key)))
                                   .arg(std::isnan(w) ? tr("masked (future)") : QString::number(w, 'g', 4)));
        }
}

}  // namespace lengen::ui
