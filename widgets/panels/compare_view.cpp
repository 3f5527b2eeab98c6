#include "compare_view.h"

#include <algorithm>

#include <QApplication>
#include <QHeaderView>
#include <QSplitter>
#include <QTableWidget>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

#include <map>
#include <set>

#include "curve_interactions.h"
#include "export_dialog.h"
#include "figure_builder.h"
#include "figure_export.h"
#include "lengen/engine/analysis.h"
#include "lengen/engine/config.h"
#include "lengen/engine/run_file.h"
#include "lengen/engine/sweep_aggregate.h"
#include "qcp.h"
#include "run_figures.h"

namespace lengen::ui {

namespace {

// The group a run belongs to, as its legend names it.
std::string groupKey(const engine::RunFileInfo& info, CompareGroup group)
{
    switch (group) {
    case CompareGroup::PositionEncoding: return info.positionEncoding;
    case CompareGroup::Task: return info.task;
    case CompareGroup::Backbone: return info.backbone;
    case CompareGroup::SweepAxes: {
        if (info.sweepAxes.empty())
            return info.positionEncoding;  // not a sweep cell: its PE
        std::string out;  // "pe=rope seed=2" without the seed
        size_t start = 0;
        while (start < info.sweepAxes.size()) {
            size_t end = info.sweepAxes.find(' ', start);
            if (end == std::string::npos)
                end = info.sweepAxes.size();
            const std::string part = info.sweepAxes.substr(start, end - start);
            if (part.rfind("seed=", 0) != 0)
                out += (out.empty() ? "" : " ") + part;
            start = end + 1;
        }
        return out.empty() ? info.sweepName : out;
    }
    case CompareGroup::EachRun: break;
    }
    return info.runId;
}

}  // namespace

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

plots::FigureSpec compareFigure(const QStringList& runFiles, const std::string& method, bool baselines,
                                QStringList* missing, CompareGroup group)
{
    plots::FigureSpec f;
    std::vector<std::string> groupOrder;                            // first appearance
    std::map<std::string, std::vector<std::vector<double>>> grouped; // key -> each run's curve
    std::map<std::string, std::vector<std::string>> groupRuns;       // key -> its runs' ids
    bool classification = false;
    double zero = 0, train = 0;
    std::string task;
    for (const auto& run : runFiles) {
        const auto info = engine::readRunInfo(engine::locateRunFile(run.toStdString()));
        bool found = false;
        for (const auto& r : engine::readEvaluations(run.toStdString())) {
            if (r.method != method || r.source != "lengen" || !r.intervention.empty() || r.curves.empty())
                continue;
            found = true;
            if (group != CompareGroup::EachRun) {
                const std::string key = groupKey(info, group);
                if (!grouped.count(key))
                    groupOrder.push_back(key);
                grouped[key].push_back(r.curves.front().stats.mean);
                groupRuns[key].push_back(info.runId);
            } else {
                plots::showRunColorAs(info.runId, {});
                // The run's own colour: the same in the training overlay and the run table.
                f.series.push_back(figures::curveSeries(figures::runLegend(info), r.curves.front().stats,
                                                        plots::runColor(info.runId)));
            }
            if (baselines && run == runFiles.front())
                for (size_t b = 1; b < r.curves.size(); ++b) {
                    auto base = figures::curveSeries(r.curves[b].label, r.curves[b].stats, {}, false);
                    base.dashed = true;
                    base.width = 1.5;
                    f.series.push_back(base);
                }
            classification = r.classification;
            zero = std::max(zero, r.zeroEstimator);
            train = r.trainPoints;
            task = info.task;
        }
        if (!found && missing)
            missing->push_back(run);
    }
    for (size_t g = 0; g < groupOrder.size(); ++g) {  // one curve per group, before the baselines
        const std::string& key = groupOrder[g];
        const auto c = engine::combineOverSeeds(grouped[key], 1000);
        engine::CurveStats stats;
        stats.mean = c.mean;
        stats.bootstrapLow = c.low;
        stats.bootstrapHigh = c.high;
        const size_t n = grouped[key].size();
        // A group of one run keeps that run's colour (the same curve as ungrouped, nothing in
        // the legend says it changed); a group of several takes its own, and each member's
        // swatch in the Runs list shows it, as the legend's "(3 runs, …)" says.
        const auto& members = groupRuns[key];
        const std::string colour = n == 1 ? plots::runColor(members.front()) : plots::runColor("group:" + key);
        for (const auto& id : members)
            plots::showRunColorAs(id, n == 1 ? std::string() : "group:" + key);
        auto series = figures::curveSeries(key + " (" + std::to_string(n) + " run" + (n == 1 ? "" : "s") + ", " +
                                               c.band + ")",
                                           stats, colour);
        f.series.insert(f.series.begin() + std::ptrdiff_t(g), series);
    }
    f.title = task + " - " + method;  // no count of curves: an export leaves hidden ones out
    double xMax = 0;
    for (const auto& s : f.series)
        xMax = std::max(xMax, double(s.x.size()) - 1);
    figures::errorAxes(f, classification, zero, xMax);
    if (train > 0 && xMax > figures::trainLengthK(int(train)))  // only where the prompts go beyond it
        f.vlines.push_back({figures::trainLengthK(int(train)), "train length"});
    return f;
}

CompareView::CompareView(QWidget* parent) : QWidget(parent)
{
    m_method = new QComboBox;
    m_baselines = new QCheckBox(tr("baselines of the first run"));
    m_group = new QComboBox;
    m_group->addItem(tr("each run"), int(CompareGroup::EachRun));
    m_group->addItem(tr("PE (mean over seeds)"), int(CompareGroup::PositionEncoding));
    m_group->addItem(tr("sweep cell (all axes but seed)"), int(CompareGroup::SweepAxes));
    m_group->addItem(tr("task"), int(CompareGroup::Task));
    m_group->addItem(tr("backbone"), int(CompareGroup::Backbone));
    m_group->setToolTip(tr("One curve per group of runs: the mean over them with a band (bootstrap over "
                           "runs from 3, else their min–max)"));
    m_plot = new QCustomPlot;
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    m_info = new QLabel(tr("Select runs in the browser and press “Compare selected”."));
    m_info->setWordWrap(true);
    m_evaluate = new QPushButton(tr("Evaluate them"));
    m_evaluate->setToolTip(tr("Queue an evaluation of the runs this comparison leaves out"));
    m_evaluate->setVisible(false);
    connect(m_evaluate, &QPushButton::clicked, this, [this] {
        QStringList files;  // a run may have been selected as its folder (--compare DIR)
        for (const auto& run : m_missing)
            try {
                files << QString::fromStdString(engine::locateRunFile(run.toStdString()));
            } catch (const std::exception& e) {
                m_info->setText(QString::fromUtf8(e.what()));  // gone since it was compared
            }
        if (!files.isEmpty())
            Q_EMIT evaluateRequested(files, m_method->currentText());
    });
    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Method:")));
    bar->addWidget(m_method, 1);
    bar->addWidget(new QLabel(tr("Curves:")));
    bar->addWidget(m_group);
    bar->addWidget(m_baselines);
    auto* copyButton = new QPushButton(tr("Copy"));
    auto* exportButton = new QPushButton(tr("Export…"));
    exportButton->setToolTip(tr("PNG, SVG, PDF or CSV (the plotted data)"));
    bar->addWidget(copyButton);
    bar->addWidget(exportButton);
    connect(copyButton, &QPushButton::clicked, this, [this] { QApplication::clipboard()->setPixmap(m_plot->toPixmap()); });
    connect(exportButton, &QPushButton::clicked, this, [this] {
        if (m_spec.series.empty())
            return;
        const auto target = askExportTarget(this, tr("Export comparison"),
                                            m_panels ? QStringLiteral("compare_methods.png")
                                                     : QStringLiteral("compare_%1.png").arg(m_method->currentText()));
        QString error;
        if (target)
            reportExport(this, exportTo(target->path, target->dpi, &error), error);
    });
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    auto* info = new QHBoxLayout;
    info->addWidget(m_info, 1);
    info->addWidget(m_evaluate);
    layout->addLayout(info);
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
    topLayout->addWidget(m_plot, 1);
    topLayout->addWidget(m_hover);
    split->addWidget(top);
    auto* bottom = new QWidget;
    auto* bottomLayout = new QVBoxLayout(bottom);
    bottomLayout->setContentsMargins(0, 0, 0, 0);
    m_diffTitle = new QLabel;
    bottomLayout->addWidget(m_diffTitle);
    bottomLayout->addWidget(m_diff, 1);
    split->addWidget(bottom);
    split->setStretchFactor(0, 4);
    split->setStretchFactor(1, 1);
    layout->addWidget(split, 1);
    plots::enableCurveInteractions(*m_plot, [this](const QString& text) { m_hover->setText(text); });
    connect(m_method, &QComboBox::currentIndexChanged, this, &CompareView::draw);
    connect(m_baselines, &QCheckBox::toggled, this, &CompareView::draw);
    connect(m_group, &QComboBox::currentIndexChanged, this, &CompareView::draw);
}

QString CompareView::allMethodsText() { return tr("all methods, as panels"); }

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
    if (m_panels) {  // the panels as shown, one legend for all
        const auto result = plots::exportGrid(*m_panels, path, format, dpi);
        if (!result.ok && error)
            *error = result.error;
        return result.ok;
    }
    // As shown: curves hidden by a legend click stay out.
    const auto result = plots::exportFigure(plots::shownSpec(m_spec, *m_plot), path, format, dpi);
    if (!result.ok && error)
        *error = result.error;
    return result.ok;
}

void CompareView::setRuns(const QStringList& runFiles)
{
    m_runs = runFiles;
    std::set<std::string> methods;
    for (const auto& run : runFiles) {
        try {
            for (const auto& r : engine::readEvaluations(run.toStdString()))
                methods.insert(r.method);
        } catch (const std::exception&) {
        }
    }
    const QSignalBlocker block(m_method);
    const QString keep = m_method->currentText();
    m_method->clear();
    for (const auto& m : methods)
        m_method->addItem(QString::fromStdString(m));
    if (methods.size() > 1)
        m_method->addItem(allMethodsText());
    const int i = m_method->findText(keep.isEmpty() ? QStringLiteral("ood_length") : keep);
    m_method->setCurrentIndex(i >= 0 ? i : 0);
    draw();
    fillDifferences();
}

void CompareView::fillDifferences()
{
    std::vector<engine::RunConfig> configs;
    QStringList names;
    for (const auto& run : m_runs) {
        try {
            const auto info = engine::readRunInfo(engine::locateRunFile(run.toStdString()));
            configs.push_back(engine::storedRunConfig(info.configYaml, info.path));
            names << QString::fromStdString(figures::runLegend(info));
        } catch (const std::exception&) {
            // An unreadable run has no config to compare; the figure's line says why.
        }
    }
    const auto diffs = configs.size() > 1 ? engine::configDifferences(configs)
                                          : std::vector<engine::ConfigDifference>{};
    m_diff->clear();
    m_diff->setColumnCount(int(names.size()));
    m_diff->setHorizontalHeaderLabels(names);
    m_diff->setRowCount(int(diffs.size()));
    QStringList keys;
    for (size_t r = 0; r < diffs.size(); ++r) {
        keys << QString::fromStdString(diffs[r].key);
        for (size_t c = 0; c < diffs[r].values.size(); ++c) {
            const auto& stored = diffs[r].values[c];
            const auto& why = diffs[r].notApplied[c];
            // A key this run does not read: "—" and the reason, not a value it never used.
            auto* item = new QTableWidgetItem(why.empty() ? shownConfigValue(stored) : QStringLiteral("—"));
            item->setToolTip(!why.empty()    ? QString::fromStdString(why)
                             : stored.empty() ? tr("not in this run's config")
                                              : QString::fromStdString(stored));
            if (!why.empty())
                item->setForeground(QColor(128, 128, 128));
            m_diff->setItem(int(r), int(c), item);
        }
    }
    m_diff->setVerticalHeaderLabels(keys);
    m_diff->setVisible(configs.size() > 1 && !diffs.empty());
    m_diffTitle->setText(configs.size() < 2 ? QString()
                         : diffs.empty()    ? tr("The compared runs' configs are the same.")
                                            : tr("Config keys that differ between the compared runs (%n):", nullptr,
                                                 int(diffs.size())));
    m_diff->resizeColumnsToContents();
}

QString CompareView::infoText() const { return m_info->text(); }

namespace {
// "NoPE seed 1 (ab12cd34)": how the figure's legend names a run.
QString runName(const QString& run)
{
    try {
        const auto info = engine::readRunInfo(engine::locateRunFile(run.toStdString()));
        return QString::fromStdString(figures::runLegend(info));
    } catch (const std::exception&) {
        return run;
    }
}
}  // namespace

void CompareView::draw()
{
    m_missing.clear();
    m_hover->clear();  // the read-out of the previous figure is not this one's
    if (m_runs.isEmpty() || m_method->currentText().isEmpty()) {
        if (!m_runs.isEmpty())
            m_missing = m_runs;
        m_evaluate->setVisible(!m_missing.isEmpty());
        m_info->setText(m_runs.isEmpty() ? tr("Select runs in the browser and press “Compare selected”.")
                                         : tr("None of the selected runs is evaluated yet."));
        return;
    }
    m_panels.reset();
    if (m_method->currentText() == allMethodsText())
        return drawPanels();
    try {
        m_spec = compareFigure(m_runs, m_method->currentText().toStdString(), m_baselines->isChecked(), &m_missing,
                               CompareGroup(m_group->currentData().toInt()));
        plots::buildFigure(*m_plot, m_spec);
        const auto shown = m_runs.size() - m_missing.size();
        QString text = m_runs.size() == 1 ? tr("1 run") : tr("%1 of %2 runs compared").arg(shown).arg(m_runs.size());
        if (!m_missing.isEmpty()) {
            QStringList names;
            for (const auto& r : m_missing)
                names << runName(r);
            // Said, not silently dropped: which runs have no curve here, and why.
            text += tr("; left out, not evaluated with %1: %2").arg(m_method->currentText(), names.join(", "));
        }
        m_info->setText(text);
    } catch (const std::exception& e) {
        m_info->setText(QString::fromUtf8(e.what()));
    }
    m_evaluate->setVisible(!m_missing.isEmpty());
}

// Every method the runs hold, a panel each (TensorBoard's "several charts at once"): the same
// curves, grouping and baselines as one method, one legend for all panels. A run without one
// method's evaluation is left out of that panel and named in the line above.
void CompareView::drawPanels()
{
    plots::GridSpec grid;
    QStringList leftOut;
    try {
        for (int i = 0; i < m_method->count(); ++i) {
            const QString method = m_method->itemText(i);
            if (method == allMethodsText())
                continue;
            QStringList missing;
            auto panel = compareFigure(m_runs, method.toStdString(), m_baselines->isChecked(), &missing,
                                       CompareGroup(m_group->currentData().toInt()));
            if (grid.title.empty())  // "<task> - <method>": the task heads the grid
                grid.title = panel.title.substr(0, panel.title.find(" - "));
            panel.title = method.toStdString();
            grid.panels.push_back(std::move(panel));
            for (const auto& r : missing)
                leftOut << tr("%1 from %2").arg(runName(r), method);
        }
    } catch (const std::exception& e) {
        m_info->setText(QString::fromUtf8(e.what()));
        return;
    }
    grid.columns = std::min<int>(3, int(grid.panels.size()));
    grid.widthInches = 5.0 * grid.columns;
    grid.heightInches = 4.5 * ((int(grid.panels.size()) + grid.columns - 1) / grid.columns);
    plots::buildGrid(*m_plot, grid);
    m_info->setText(tr("%n method(s) side by side", nullptr, int(grid.panels.size())) +
                    (leftOut.isEmpty() ? QString() : tr("; left out, not evaluated: %1").arg(leftOut.join(", "))));
    m_panels = std::move(grid);
    m_evaluate->setVisible(false);  // Evaluate them asks for one method: choose it above
}

}  // namespace lengen::ui
