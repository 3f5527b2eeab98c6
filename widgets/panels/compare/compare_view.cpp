#include "compare_view.h"
#include "compare_differences.h"
#include "compare_figure.h"
#include "compare_logged.h"
#include "figure_provenance.h"
#include "table_rows.h"

#include <algorithm>

#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QCoreApplication>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSplitter>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>
#include <QWheelEvent>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "curve_interactions.h"
#include "export_dialog.h"
#include "figure_builder.h"
#include "figure_export.h"
#include "layout_check.h"
#include "lengen/engine/analysis.h"
#include "lengen/engine/config.h"
#include "lengen/engine/run_file.h"
#include "lengen/engine/sweep_aggregate.h"
#include "live_follow.h"
#include "qcp.h"
#include "run_figures.h"

namespace lengen::ui {

QString shownConfigValue(const std::string& stored)
{
    if (stored.empty())
        return QStringLiteral("—");
    const QString text = QString::fromStdString(stored);
    bool number = false;
    const double v = text.toDouble(&number);
    // Long decimals only: integers, short numbers and words stay as written.
    if (!number || text.size() <= 8 || !text.contains(QLatin1Char('.')))
        return text;
    return QString::number(v, 'g', 6);
}

CompareView::CompareView(QWidget* parent) : QWidget(parent)
{
    createControls();
    m_plot = new QCustomPlot;
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    m_state = std::make_unique<FigureState>(*m_plot);
    m_follow = new QTimer(this);
    m_follow->setInterval(1000);
    connect(m_follow, &QTimer::timeout, this, &CompareView::followFiles);
    m_follow->start();
    m_info = new QLabel(tr("Select runs in the browser and press “Compare selected”."));
    m_info->setWordWrap(true);
    m_evaluate = new QPushButton(tr("Evaluate them"));
    m_evaluate->setToolTip(tr("Queue an evaluation of the runs this comparison leaves out"));
    m_evaluate->setVisible(false);
    connect(m_evaluate, &QPushButton::clicked, this, [this] {
        QStringList files;  // a run may have been selected as its folder (--compare DIR)
        for (const auto& run : m_model.shown().missing)
            try {
                files << QString::fromStdString(engine::locateRunFile(run.toStdString()));
            } catch (const std::exception& e) {
                m_info->setText(QString::fromUtf8(e.what()));  // gone since it was compared
            }
        if (!files.isEmpty())
            Q_EMIT evaluateRequested(files, m_model.method());
    });
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(buildBar());
    layout->addWidget(buildLoggedRow());
    auto* info = new QHBoxLayout;
    info->addWidget(m_info, 1);
    info->addWidget(m_evaluate);
    layout->addLayout(info);
    layout->addWidget(buildPlotAndConfig(), 1);
    // The hover read-out beside the line above the figure: a row of its own cost the figure
    // the height it needs at 1280 x 800.
    m_hover->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);  // never widens the tab
    info->addWidget(m_hover, 1);
    connectControls();
}

CompareView::~CompareView() = default;

bool CompareView::followFiles()
{
    if (!m_model.changedOnDisk())
        return false;
    m_state->take();
    m_live = true;
    setRuns(m_model.runs());  // the methods again (one may be new), then the figure
    m_live = false;
    m_state->restore();
    return true;
}

// The plot (scrolling when panels need room) over the table of config keys that differ.
QWidget* CompareView::buildPlotAndConfig()
{
    m_hover = new QLabel;
    // The first thing a tracker's user looks for: which config keys differ between these runs.
    m_diff = new QTableWidget;
    m_diff->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_diff->horizontalHeader()->setStretchLastSection(true);
    m_diff->setToolTip(tr("Config keys whose values differ between the compared runs (from each "
                          "run's stored, resolved config)"));
    auto* split = new QSplitter(Qt::Vertical);
    split->setObjectName(QStringLiteral("comparePlotConfig"));
    auto* top = new QWidget;
    auto* topLayout = new QVBoxLayout(top);
    topLayout->setContentsMargins(0, 0, 0, 0);
    // Panels of every method need room: the plot scrolls when they do not fit (a panel row is
    // kept at least 260 px tall; one figure fills the area as before).
    m_scroll = new QScrollArea;
    m_scroll->setWidgetResizable(true);
    m_scroll->setFrameShape(QFrame::NoFrame);
    m_scroll->setWidget(m_plot);
    m_plot->installEventFilter(this);
    // The config table below never squeezes the figure under a readable panel (issue 80,
    // defect 10: 70 px tall with the table open); the splitter gives the table the rest.
    m_scroll->setMinimumHeight(plots::kPlotMinHeight);
    topLayout->addWidget(m_scroll, 1);
    split->addWidget(top);
    auto* bottom = new QWidget;
    auto* bottomLayout = new QVBoxLayout(bottom);
    bottomLayout->setContentsMargins(0, 0, 0, 0);
    m_diffTitle = new QLabel;
    bottomLayout->addWidget(m_diffTitle);
    bottomLayout->addWidget(m_diff, 1);
    // Compact rows, and room for three keys (setDiffTable): with Qt's default rows the table
    // showed one key at 1280 x 800 beside a readable figure; more keys scroll.
    useCompactRows(m_diff);
    m_diff->setMinimumHeight(1);
    split->addWidget(bottom);
    split->setStretchFactor(0, 4);
    split->setStretchFactor(1, 1);
    split->setChildrenCollapsible(false);
    // The page scrolls below the figure's and the table's minimums instead of bounding the
    // Runs dock: a tab widget is as tall as its tallest page's minimum (issue 70, defect 16).
    auto* page = new QScrollArea;
    page->setWidgetResizable(true);
    page->setFrameShape(QFrame::NoFrame);
    page->setWidget(split);
    return page;
}

bool CompareView::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_plot && event->type() == QEvent::Wheel && m_model.shown().panels &&
        !(static_cast<QWheelEvent*>(event)->modifiers() & Qt::ControlModifier)) {
        QCoreApplication::sendEvent(m_scroll->verticalScrollBar(), event);
        return true;
    }
    return QWidget::eventFilter(watched, event);
}

QString CompareView::allMethodsText() { return CompareModel::allMethodsText(); }

bool CompareView::setMethod(const QString& method)
{
    const int i = m_method->findText(method);
    if (i < 0)
        return false;
    m_method->setCurrentIndex(i);
    return true;
}

bool CompareView::exportTo(const QString& path, int dpi, QString* error)
{
    const auto format = plots::formatFromPath(path).value_or(plots::Format::Png);
    if (panels()) {  // the panels as shown, one legend for all
        const auto result = plots::exportGrid(*panels(), path, format, dpi);
        if (!result.ok && error)
            *error = result.error;
        return result.ok;
    }
    // As shown: curves hidden by a legend click stay out.
    const auto result = plots::exportFigure(plots::shownSpec(spec(), *m_plot), path, format, dpi);
    if (!result.ok && error)
        *error = result.error;
    if (!result.ok)
        return false;
    // Beside it, what made it: every run, the evaluation each gave, the grouping and the band.
    try {
        const auto o = m_model.options();
        const auto& shown = m_model.shown();
        QJsonObject grouping;
        grouping["curves"] = m_group->currentText();
        // What `lengen export --from` groups by: the keys the figure was grouped by (for
        // "settings" the ones that differed then), so the rebuild draws the same groups.
        const bool settings = o.group == CompareGroup::Settings;
        grouping["group"] =
            QString::fromLatin1(compareGroupName(settings ? CompareGroup::Keys : o.group));
        QJsonArray keys;
        for (const auto& k : settings ? shown.groupedBy : o.keys)
            keys.append(QString::fromStdString(k));
        grouping["keys"] = keys;
        grouping["band"] = QString::fromStdString(engine::bandKindName(o.band));
        grouping["baselines"] = m_model.choices().baselines;
        if (m_model.followsLogs()) {  // a logged column's controls: export --from draws them
            grouping["smoothing"] = o.smoothing;
            grouping["x"] = QString::fromLatin1(loggedXName(o.x));
        }
        figures::writeProvenance(
            path.toStdString(),
            figures::multiRunProvenance(shown.sources, m_model.method().toStdString(), grouping,
                                        [this] {
                                            auto view = m_model.view();
                                            view.logY = spec().y.log;  // as drawn
                                            view.hidden = plots::hiddenSeries(*m_plot);
                                            view.colors = figures::seriesColors(spec());
                                            return view;
                                        }()));
    } catch (const std::exception& e) {
        if (error)
            *error = QString::fromUtf8(e.what());
        return false;
    }
    return true;
}

void CompareView::setRuns(const QStringList& runFiles)
{
    m_model.setRuns(runFiles);
    const QSignalBlocker block(m_method);
    m_method->clear();
    m_method->addItems(m_model.evaluationMethods());
    // Any logged column of the runs by step, grouped and banded like the methods (issue 55).
    if (!m_model.evaluationMethods().isEmpty())
        m_method->insertSeparator(m_method->count());
    m_method->addItems(m_model.loggedMethods());
    m_method->setCurrentIndex(std::max(0, m_method->findText(m_model.method())));
    draw();
    fillDifferences();
}

void CompareView::fillDifferences()
{
    const auto t = m_model.table();
    m_diff->clear();
    m_diff->setColumnCount(int(t.runNames.size()));
    m_diff->setHorizontalHeaderLabels(t.runNames);
    m_diff->setRowCount(int(t.rows.size()));
    QStringList keys;
    for (size_t r = 0; r < t.rows.size(); ++r) {
        keys << QString::fromStdString(t.rows[r].key);
        for (size_t c = 0; c < t.rows[r].values.size(); ++c) {
            const auto& stored = t.rows[r].values[c];
            const auto& why = t.rows[r].notApplied[c];
            // A key this run does not read: "—" and the reason, not a value it never used.
            auto* item =
                new QTableWidgetItem(why.empty() ? shownConfigValue(stored) : QStringLiteral("—"));
            item->setToolTip(!why.empty()     ? QString::fromStdString(why)
                             : stored.empty() ? tr("not in this run's config")
                                              : QString::fromStdString(stored));
            if (!why.empty())
                item->setForeground(QColor(128, 128, 128));
            m_diff->setItem(int(r), int(c), item);
        }
    }
    m_diff->setVerticalHeaderLabels(keys);
    m_diff->setVisible(t.runNames.size() > 1 && !t.rows.empty());
    m_diffTitle->setText(t.title);
    m_diff->resizeColumnsToContents();
    m_diff->setMinimumHeight(
        m_diff->rowCount() ? heightForRows(m_diff, std::min(3, m_diff->rowCount())) : 1);
}

bool CompareView::drawsSomething() const { return !spec().series.empty() || panels(); }

QString CompareView::nothingText() const
{
    return runs().isEmpty()
               ? tr("Nothing to export: select runs in the Runs list and press Compare selected")
               : tr("Nothing to export: no curve is drawn (%1)").arg(infoText());
}

QString CompareView::infoText() const { return m_info->text(); }
QString CompareView::infoToolTip() const { return m_info->toolTip(); }

// Paints what the model says for the runs and choices now.
void CompareView::draw()
{
    if (!m_live)
        m_state->forget();  // other data: the user's zoom was of another figure
    m_hover->clear();       // the read-out of the previous figure is not this one's
    const auto& shown = m_model.rebuild();
    m_info->setText(shown.info);
    {  // log y as drawn: a loss is log by itself until the box is unticked
        const QSignalBlocker block(m_logY);
        m_logY->setChecked(shown.panels
                               ? !shown.panels->panels.empty() && shown.panels->panels.front().y.log
                               : shown.spec.y.log);
    }
    m_info->setToolTip(shown.infoTip);
    m_evaluate->setVisible(shown.offerEvaluate);
    m_loggedRow->setVisible(m_model.followsLogs());
    // A schedule or a clock is drawn as logged: the slider says so instead of bending it.
    const bool smoothable = isSmoothable(m_model.method().toStdString());
    m_smoothing->setEnabled(smoothable);
    m_smoothingValue->setEnabled(smoothable);
    m_smoothing->setToolTip(smoothable ? tr("EMA smoothing of each run's logged column, before "
                                            "runs are grouped (0: raw)")
                                       : tr("Not smoothed: a schedule or a clock is drawn as "
                                            "logged"));
    if (shown.panels) {
        const auto& grid = *shown.panels;
        const int rows = (int(grid.panels.size()) + grid.columns - 1) / std::max(grid.columns, 1);
        const int columns = std::min(std::max(grid.columns, 1), int(grid.panels.size()));
        // Every panel a readable data area; the area scrolls (both ways) when they do not fit.
        m_plot->setMinimumSize(plots::gridMinimumWidth(columns),
                               plots::gridMinimumHeight(rows, columns));
        plots::buildGrid(*m_plot, grid);
    } else {
        m_plot->setMinimumSize(plots::kPlotMinWidth, plots::kPlotMinHeight);
        plots::buildFigure(*m_plot, shown.spec);
    }
    Q_EMIT colorsChanged();
}

}  // namespace lengen::ui
