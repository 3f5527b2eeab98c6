#include "attention_view.h"
#include "ask.h"
#include "figure_view.h"
#include "open_run_model.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QStackedLayout>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

#include <cmath>
#include <tuple>

#include "attention_grid.h"
#include "curve_interactions.h"
#include "export_dialog.h"
#include "figure_builder.h"
#include "figure_export.h"
#include "layout_check.h"
#include "lengen/engine/analysis.h"
#include "qcp.h"
#include "run_figures.h"

namespace lengen::ui {

namespace {
QString kHoverHint() { return AttentionView::tr("Hover over the map for query, key and weight."); }
}  // namespace

AttentionView::AttentionView(QWidget* parent) : QWidget(parent)
{
    auto* bar = createSelectionBar();
    createPages();
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addLayout(m_stack, 1);
    layout->addWidget(m_readout);
    wireSelection();
}

// Prompt length, prompt, layer, head, colour scale, the grid toggle, the intervention beside,
// and Export.
QHBoxLayout* AttentionView::createSelectionBar()
{
    m_setting = new QComboBox;
    m_prompt = new QSpinBox;
    m_layer = new QSpinBox;
    m_head = new QSpinBox;
    m_prompt->setObjectName(QStringLiteral("prompt"));
    m_layer->setObjectName(QStringLiteral("layer"));
    m_head->setObjectName(QStringLiteral("head"));
    m_head->setSpecialValueText(tr("mean"));  // shown at the minimum, -1: the mean over heads
    m_head->setToolTip(tr("Head (from 0); below 0: the mean over heads"));
    m_query = new QSpinBox;
    m_query->setToolTip(
        tr("The query token whose attention row is plotted; click a row of the map"));
    m_log = new QCheckBox(tr("log colour scale"));
    m_fit = new QCheckBox(tr("fit colours to view"));
    m_fit->setChecked(true);
    m_fit->setToolTip(
        tr("Colour range from the visible cells; off: the fixed 0–1 range (log: 1e-4–1)"));
    m_log->setChecked(true);
    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Prompt length:")));
    bar->addWidget(m_setting, 1);
    for (auto [label, box] :
         {std::pair{tr("prompt"), m_prompt}, {tr("layer"), m_layer}, {tr("head"), m_head}}) {
        bar->addWidget(new QLabel(label));
        bar->addWidget(box);
    }
    bar->addWidget(m_log);
    bar->addWidget(m_fit);
    m_gridButton = new QToolButton;
    m_gridButton->setText(tr("Layers × heads"));
    m_gridButton->setCheckable(true);
    m_gridButton->setToolTip(
        tr("Thumbnails of every layer and head of this prompt; click one to open it"));
    bar->addWidget(m_gridButton);
    m_intervention = new QComboBox;
    m_intervention->setObjectName(QStringLiteral("intervention"));
    m_intervention->setToolTip(
        tr("Show the map probed under a training-free length extension beside the "
           "untouched one (Analysis ▸ Probe under an intervention…)"));
    bar->addWidget(new QLabel(tr("beside:")));
    bar->addWidget(m_intervention);
    auto* exportButton = new QPushButton(tr("Export…"));
    exportButton->setToolTip(tr("The loaded tile: PNG, SVG, PDF, or CSV of its cells"));
    bar->addWidget(exportButton);
    connect(exportButton, &QPushButton::clicked, this, [this] {
        if (!m_heatmap) {  // never the previous run's map: this run has none to export
            ask::tell(this, tr("Export attention map"),
                      tr("Nothing to export: no attention map is shown for this run."));
            return;
        }
        askExportTarget(this, tr("Export attention map"), QStringLiteral("attention_map.png"),
                        [this](const ExportChoice& target) {
                            QString error;
                            reportExport(this, exportTo(target.path, target.dpi, &error), error);
                        });
    });
    return bar;
}

// The pages of the stack: "nothing stored", the map(s) above the query row, the thumbnails.
void AttentionView::createPages()
{
    m_plot = new QCustomPlot;
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    m_plot->setMouseTracking(true);
    m_readout = new QLabel(kHoverHint());
    m_empty = new QLabel(FigureView::noRunText());  // nothing is open yet
    m_empty->setObjectName(QStringLiteral("emptyText"));
    m_empty->setAlignment(Qt::AlignCenter);
    m_row = new QCustomPlot;
    plots::enableCurveInteractions(*m_row, [this](const QString& line) {
        if (!line.isEmpty())
            m_readout->setText(tr("row of query %1 — key %2").arg(m_query->value()).arg(line));
    });
    auto* rowBox = new QWidget;
    auto* rowBar = new QHBoxLayout;
    rowBar->addWidget(new QLabel(tr("Attention row of query")));
    rowBar->addWidget(m_query);
    rowBar->addStretch();
    auto* rowLayout = new QVBoxLayout(rowBox);
    rowLayout->setContentsMargins(0, 0, 0, 0);
    rowLayout->addLayout(rowBar);
    rowLayout->addWidget(m_row, 1);
    // Each keeps a readable panel (the layout check: the map's was 124 px, the row's 74 px
    // tall at 1280 x 800); the page scrolls in a short window.
    m_row->setMinimumHeight(plots::kPlotMinHeight);
    m_plot->setMinimumHeight(plots::kPlotMinHeight);
    m_editPlot = new QCustomPlot;
    m_editPlot->setMinimumHeight(plots::kPlotMinHeight);
    m_editPlot->setMouseTracking(true);
    m_editPlot->hide();
    m_maps = new QSplitter(Qt::Horizontal);  // the untouched map, then the intervention's
    m_maps->addWidget(m_plot);
    m_maps->addWidget(m_editPlot);
    auto* mapPage = new QSplitter(Qt::Vertical);
    mapPage->addWidget(m_maps);
    mapPage->addWidget(rowBox);
    mapPage->setStretchFactor(0, 3);
    mapPage->setStretchFactor(1, 1);
    m_grid = new AttentionGrid;
    m_stack = new QStackedLayout;
    m_stack->addWidget(m_empty);
    // In a scroll area: the row plot's and the map's minimums (tick labels need them) scroll
    // in a short window instead of bounding the Runs dock below the tabs.
    auto* mapScroll = new QScrollArea;
    mapScroll->setWidgetResizable(true);
    mapScroll->setFrameShape(QFrame::NoFrame);
    mapScroll->setWidget(mapPage);
    m_stack->addWidget(mapScroll);
    m_stack->addWidget(m_grid);
}

// Every selection reloads what it changes; a click on the map picks the query row.
void AttentionView::wireSelection()
{
    m_reload = new QTimer(this);
    m_reload->setSingleShot(true);
    m_reload->setInterval(150);  // after a pan or zoom settles
    connect(m_reload, &QTimer::timeout, this, &AttentionView::loadVisibleTile);
    connect(m_setting, &QComboBox::currentIndexChanged, this, &AttentionView::onSelection);
    connect(m_intervention, &QComboBox::currentIndexChanged, this, [this] { loadVisibleTile(); });
    for (auto* box : {m_layer, m_head})
        connect(box, &QSpinBox::valueChanged, this, [this] { loadVisibleTile(); });
    connect(m_prompt, &QSpinBox::valueChanged, this, [this] {
        loadVisibleTile();
        refreshGrid();
    });
    connect(m_query, &QSpinBox::valueChanged, this, &AttentionView::drawRow);
    connect(m_log, &QCheckBox::toggled, this, [this] {
        loadVisibleTile();
        refreshGrid();
    });
    connect(m_fit, &QCheckBox::toggled, this, [this] { loadVisibleTile(); });
    connect(m_gridButton, &QToolButton::toggled, this, &AttentionView::showGrid);
    connect(m_grid, &AttentionGrid::picked, this, [this](int layer, int head) {
        select(m_prompt->value(), layer, head);
        showGrid(false);
    });
    connect(m_grid, &AttentionGrid::statusMessage, this, &AttentionView::statusMessage);
    connect(m_plot, &QCustomPlot::mouseMove, this, [this](QMouseEvent* e) { hoverOn(m_plot, e); });
    connect(m_editPlot, &QCustomPlot::mouseMove, this,
            [this](QMouseEvent* e) { hoverOn(m_editPlot, e); });
    connect(m_plot, &QCustomPlot::mousePress, this,
            [this](QMouseEvent* e) { m_pressAt = e->pos(); });
    connect(m_plot, &QCustomPlot::mouseRelease, this, [this](QMouseEvent* e) {
        // A click (not a drag) on a row chooses that query for the row plot.
        auto* rect = m_plot->axisRect();
        if (rect && m_tokens > 0 && (e->pos() - m_pressAt).manhattanLength() < 4) {
            const int q = int(std::lround(rect->axis(QCPAxis::atLeft)->pixelToCoord(e->pos().y())));
            if (q >= 0 && q < m_tokens)
                setQuery(q);
        }
        m_reload->start();
    });
    connect(m_plot, &QCustomPlot::mouseWheel, this, [this] { m_reload->start(); });
    connect(this, &AttentionView::statusMessage, this, [this] {
        m_stack->setCurrentIndex(m_tokens <= 0 ? 0 : m_gridButton->isChecked() ? 2 : 1);
    });
}

void AttentionView::setRun(const QString& runFile)
{
    m_run = runFile;
    m_empty->setText(runFile.isEmpty()
                         ? FigureView::noRunText()
                         : tr("No attention maps stored for this run.\nRun the attention probe "
                              "(Analysis ▸ Probe) to compute them."));
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
    {
        const QString keep = m_intervention->currentData().toString();
        const QSignalBlocker blockEdit(m_intervention);
        m_intervention->clear();
        m_intervention->addItem(tr("none"), QString());
        try {
            if (!runFile.isEmpty())
                for (const auto& spec :
                     engine::analysisContents(runFile.toStdString()).probeInterventions)
                    m_intervention->addItem(QString::fromStdString(spec),
                                            QString::fromStdString(spec));
        } catch (const std::exception&) {  // the settings' read above reported a damaged file
        }
        m_intervention->setCurrentIndex(std::max(0, m_intervention->findData(keep)));
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
        m_rowSpec.reset();
        m_tile = QRect();
        m_plot->clearPlottables();
        m_plot->replot();
        m_editHeatmap.reset();
        m_editPlot->hide();
        m_row->clearPlottables();
        m_row->replot();
        m_grid->show(QString(), QString(), 0, false);
        Q_EMIT statusMessage(QString());
        return;
    }
    const auto& s = m_settings[size_t(i)];
    m_tokens = s.tokens;
    // Prompts, layers and heads all count from 0, as stored and as `lengen export` takes them;
    // the head box goes one below: the mean over heads.
    for (auto [box, first, count] : {std::tuple{m_prompt, 0, s.mapPrompts},
                                     {m_layer, 0, s.layers},
                                     {m_head, -1, s.heads + 1},
                                     {m_query, 0, s.tokens}}) {
        const QSignalBlocker block(box);
        box->setRange(first, first + count - 1);
    }
    {
        const QSignalBlocker block(m_layer);
        m_layer->setValue(s.layers - 1);
        const QSignalBlocker blockQuery(m_query);
        m_query->setValue(s.query);  // the last x token's query, as the reference's curves use
    }
    showWindow(0, 0, std::min(m_tokens, kMaxTile));
    refreshGrid();
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
    m.layer = m_layer->value();
    m.head = m_head->value();
    m.r0 = r0;
    m.r1 = r1;
    m.c0 = c0;
    m.c1 = c1;
    try {
        const auto& s = m_settings.at(size_t(m_setting->currentIndex()));
        auto fig = figures::makeFigure(m_run.toStdString(), "attention_map/" + s.name, m);
        auto edit = interventionTile(m);
        for (auto* h : {&*fig.heatmap, edit ? &*edit : nullptr}) {
            if (!h)
                continue;
            h->logScale = m_log->isChecked();
            if (m_fit->isChecked()) {  // the visible tile's own range (a long map sits near 1/T)
                h->zMin.reset();
                h->zMax.reset();
            } else if (!h->logScale) {
                h->zMin = 0.0;
            }
        }
        if (edit)
            shareColourRange(*fig.heatmap, *edit);
        plots::buildHeatmap(*m_plot, *fig.heatmap);
        m_heatmap = fig.heatmap;
        // Keep the user's view (buildHeatmap fits the axes to the tile).
        m_plot->axisRect()->axis(QCPAxis::atBottom)->setRange(xr);
        m_plot->axisRect()->axis(QCPAxis::atLeft)->setRange(yr);
        m_plot->replot(QCustomPlot::rpQueuedReplot);
        drawInterventionTile(edit, xr, yr);
        m_tile = QRect(c0, r0, c1 - c0, r1 - r0);
        Q_EMIT statusMessage(tr("Attention map: queries %1–%2, keys %3–%4 loaded")
                                 .arg(r0)
                                 .arg(r1 - 1)
                                 .arg(c0)
                                 .arg(c1 - 1));
    } catch (const std::exception& e) {
        Q_EMIT statusMessage(QString::fromUtf8(e.what()));
    }
    drawRow();
}

void AttentionView::select(int prompt, int layer, int head)
{
    {
        const QSignalBlocker a(m_prompt), b(m_layer), c(m_head);
        m_prompt->setValue(prompt);
        m_layer->setValue(layer);
        m_head->setValue(head);
    }
    loadVisibleTile();
    refreshGrid();
}

int AttentionView::layer() const { return m_layer->value(); }
int AttentionView::head() const { return m_head->value(); }
int AttentionView::query() const { return m_query->value(); }

void AttentionView::setQuery(int query)
{
    if (query == m_query->value())
        drawRow();
    else
        m_query->setValue(query);  // valueChanged draws
}

void AttentionView::drawRow()
{
    m_rowSpec.reset();
    const int i = m_setting->currentIndex();
    if (m_tokens <= 0 || i < 0 || size_t(i) >= m_settings.size())
        return;
    figures::MapSelection m;
    m.prompt = m_prompt->value();
    m.layer = m_layer->value();
    m.head = m_head->value();
    try {
        auto spec = figures::attentionRowFigure(m_run.toStdString(), m_settings[size_t(i)].name, m,
                                                m_query->value());
        addInterventionRow(spec, m);  // both models' rows, the intervention's dashed
        spec.y.log = m_log->isChecked();
        plots::buildFigure(*m_row, spec);
        m_rowSpec = std::move(spec);
    } catch (const std::exception& e) {
        m_row->clearPlottables();
        m_row->replot();
        Q_EMIT statusMessage(QString::fromUtf8(e.what()));
    }
}

void AttentionView::showGrid(bool on)
{
    {
        const QSignalBlocker block(m_gridButton);
        m_gridButton->setChecked(on);
    }
    if (m_tokens > 0)
        m_stack->setCurrentIndex(on ? 2 : 1);
    refreshGrid();
}

bool AttentionView::gridShown() const { return m_gridButton->isChecked(); }

void AttentionView::refreshGrid()
{
    // Read only while shown: the grid reads every full map of the prompt.
    const int i = m_setting->currentIndex();
    if (!m_gridButton->isChecked() || m_tokens <= 0 || i < 0 || size_t(i) >= m_settings.size())
        return;
    m_grid->show(m_run, QString::fromStdString(m_settings[size_t(i)].name), m_prompt->value(),
                 m_log->isChecked());
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

// The read-out of either map: the untouched one, or the intervention's beside it (named, and
// its masked cells told apart from the causal mask's).
void AttentionView::hoverOn(QCustomPlot* plot, QMouseEvent* event)
{
    auto* rect = plot->axisRect();
    if (!rect || m_tokens <= 0)
        return;
    const int key = int(std::lround(rect->axis(QCPAxis::atBottom)->pixelToCoord(event->pos().x())));
    const int query = int(std::lround(rect->axis(QCPAxis::atLeft)->pixelToCoord(event->pos().y())));
    if (!m_tile.contains(key, query))
        return;
    const bool edit = plot == m_editPlot;
    for (int i = 0; i < plot->plottableCount(); ++i)
        if (auto* map = qobject_cast<QCPColorMap*>(plot->plottable(i))) {
            int ci = 0, ri = 0;
            map->data()->coordToCell(key, query, &ci, &ri);
            const double w = map->data()->cell(ci, ri);
            const QString value = !std::isnan(w) ? QString::number(w, 'g', 4)
                                  : key > query  ? tr("masked (future)")
                                                 : tr("masked by %1").arg(intervention());
            m_readout->setText((edit ? intervention() + QStringLiteral(": ") : QString()) +
                               tr("query %1 (%2) → key %3 (%4): weight %5")
                                   .arg(query)
                                   .arg(QString::fromStdString(figures::tokenLabel(query)))
                                   .arg(key)
                                   .arg(QString::fromStdString(figures::tokenLabel(key)))
                                   .arg(value));
        }
}

void AttentionView::followOpenRun(const OpenRunModel& model)
{
    connect(&model, &OpenRunModel::changed, this, [this](const QString& run) { setRun(run); });
    connect(&model, &OpenRunModel::updated, this,
            [this](const QString& run, OpenRunModel::Part part) {
                if (part == OpenRunModel::Part::Analysis)
                    setRun(run);
            });
}

}  // namespace lengen::ui
