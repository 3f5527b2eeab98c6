#include "compare_view.h"
#include "compare_differences.h"
#include "compare_figure.h"
#include "compare_logged.h"
#include "figure_provenance.h"

#include <algorithm>

#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "curve_interactions.h"
#include "export_dialog.h"
#include "figure_builder.h"
#include "figure_export.h"
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
        for (const auto& run : m_missing)
            try {
                files << QString::fromStdString(engine::locateRunFile(run.toStdString()));
            } catch (const std::exception& e) {
                m_info->setText(QString::fromUtf8(e.what()));  // gone since it was compared
            }
        if (!files.isEmpty())
            Q_EMIT evaluateRequested(files, m_method->currentText());
    });
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(buildBar());
    auto* info = new QHBoxLayout;
    info->addWidget(m_info, 1);
    info->addWidget(m_evaluate);
    layout->addLayout(info);
    layout->addWidget(buildPlotAndConfig(), 1);
    connectControls();
}

CompareView::~CompareView() = default;

bool CompareView::followFiles()
{
    if (m_runs.isEmpty() || runFilesStamp(m_runs, followsLogs()) == m_stamp)
        return false;
    m_state->take();
    m_live = true;
    setRuns(m_runs);  // the methods again (one may be new), then the figure
    m_live = false;
    m_state->restore();
    return true;
}

// The method, grouping, keys and band choosers.
void CompareView::createControls()
{
    m_method = new QComboBox;
    m_baselines = new QCheckBox(tr("baselines of the first run"));
    m_group = new QComboBox;
    m_group->setObjectName(QStringLiteral("compareGroup"));
    m_group->addItem(tr("every setting but the seed"), int(CompareGroup::Settings));
    m_group->addItem(tr("each run"), int(CompareGroup::EachRun));
    m_group->addItem(tr("keys…"), int(CompareGroup::Keys));
    m_group->addItem(tr("PE (mean over seeds)"), int(CompareGroup::PositionEncoding));
    m_group->addItem(tr("sweep cell (all axes but seed)"), int(CompareGroup::SweepAxes));
    m_group->addItem(tr("task"), int(CompareGroup::Task));
    m_group->addItem(tr("backbone"), int(CompareGroup::Backbone));
    m_group->setToolTip(
        tr("One curve per group of runs: the mean over them with the band chosen beside; "
           "by default runs that differ only in their seed form a group"));
    m_keys = new QLineEdit;
    m_keys->setObjectName(QStringLiteral("groupKeys"));
    m_keys->setPlaceholderText(tr("pe, model.num_hidden_layers"));
    m_keys->setToolTip(
        tr("Resolved config keys to group by (as in the config table below), or pe, task, "
           "backbone; comma-separated"));
    m_keys->setVisible(false);
    m_keys->setMinimumWidth(220);
    m_band = new QComboBox;
    m_band->setObjectName(QStringLiteral("compareBand"));
    for (auto [text, kind] : {std::pair{tr("auto band"), engine::BandKind::Auto},
                              {tr("bootstrap 5–95 %"), engine::BandKind::Bootstrap},
                              {tr("mean ± SD"), engine::BandKind::StdDev},
                              {tr("mean ± SE"), engine::BandKind::StdErr},
                              {tr("min–max"), engine::BandKind::MinMax}})
        m_band->addItem(text, int(kind));
    m_band->setToolTip(tr("The band of a group's curve; auto: bootstrap from 3 runs, else min–max. "
                          "The legend says N and the band; a group of one run has none."));
}

// The bar above the plot: the choosers, Copy and Export.
QHBoxLayout* CompareView::buildBar()
{
    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Method:")));
    bar->addWidget(m_method, 1);
    bar->addWidget(new QLabel(tr("Curves:")));
    bar->addWidget(m_group);
    bar->addWidget(m_keys);
    bar->addWidget(m_band);
    bar->addWidget(m_baselines);
    // The Evaluation tab's two view switches (issue 70, defect 8): exports follow them.
    m_logY = new QCheckBox(tr("log y"));
    m_logY->setObjectName(QStringLiteral("compareLogY"));
    m_logY->setToolTip(tr("Logarithmic y axis (errors spanning decades)"));
    m_legendOutside = new QCheckBox(tr("legend outside"));
    m_legendOutside->setObjectName(QStringLiteral("compareLegendOutside"));
    m_legendOutside->setToolTip(tr("Put the legend beside the data instead of over it"));
    bar->addWidget(m_logY);
    bar->addWidget(m_legendOutside);
    auto* copyButton = new QPushButton(tr("Copy"));
    auto* exportButton = new QPushButton(tr("Export…"));
    exportButton->setToolTip(tr("PNG, SVG, PDF or CSV (the plotted data)"));
    bar->addWidget(copyButton);
    bar->addWidget(exportButton);
    connect(copyButton, &QPushButton::clicked, this,
            [this] { QApplication::clipboard()->setPixmap(m_plot->toPixmap()); });
    connect(exportButton, &QPushButton::clicked, this, [this] {
        if (m_spec.series.empty())
            return;
        askExportTarget(this, tr("Export comparison"),
                        m_panels ? QStringLiteral("compare_methods.png")
                                 : QStringLiteral("compare_%1.png").arg(m_method->currentText()),
                        [this](const ExportChoice& target) {
                            QString error;
                            reportExport(this, exportTo(target.path, target.dpi, &error), error);
                        });
    });
    return bar;
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
    topLayout->addWidget(m_scroll, 1);
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
    return split;
}

void CompareView::connectControls()
{
    plots::enableCurveInteractions(*m_plot,
                                   [this](const QString& text) { m_hover->setText(text); });
    connect(m_method, &QComboBox::currentIndexChanged, this, [this] {
        draw();
        fillDifferences();  // its evaluation rows are the method's
    });
    connect(m_baselines, &QCheckBox::toggled, this, &CompareView::draw);
    for (auto* box : {m_logY, m_legendOutside})
        connect(box, &QCheckBox::toggled, this, [this] {
            const QStringList hidden = plots::hiddenSeries(*m_plot);  // the same curves
            draw();
            plots::hideSeries(*m_plot, hidden);
        });
    connect(m_group, &QComboBox::currentIndexChanged, this, [this] {
        m_keys->setVisible(CompareGroup(m_group->currentData().toInt()) == CompareGroup::Keys);
        draw();
    });
    connect(m_keys, &QLineEdit::editingFinished, this, &CompareView::draw);
    connect(m_band, &QComboBox::currentIndexChanged, this, &CompareView::draw);
}

figures::ViewOptions CompareView::view() const
{
    figures::ViewOptions v;  // hidden curves stay in the spec, hidden on the plot
    v.logY = m_logY->isChecked();
    v.legendOutside = m_legendOutside->isChecked();
    return v;
}

void CompareView::setView(bool logY, bool legendOutside)
{
    m_logY->setChecked(logY);
    m_legendOutside->setChecked(legendOutside);
}

CompareOptions CompareView::options() const
{
    CompareOptions o;
    o.group = CompareGroup(m_group->currentData().toInt());
    o.keys = parseGroupKeys(m_keys->text());
    o.band = engine::BandKind(m_band->currentData().toInt());
    return o;
}

void CompareView::setGrouping(CompareGroup group, const QString& keys, engine::BandKind band)
{
    const QSignalBlocker a(m_group), b(m_band);
    m_group->setCurrentIndex(std::max(0, m_group->findData(int(group))));
    m_keys->setText(keys);
    m_keys->setVisible(group == CompareGroup::Keys);
    m_band->setCurrentIndex(std::max(0, m_band->findData(int(band))));
    draw();
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
    if (!result.ok)
        return false;
    // Beside it, what made it: every run, the evaluation each gave, the grouping and the band.
    try {
        const auto o = options();
        QJsonObject grouping;
        grouping["curves"] = m_group->currentText();
        // What `lengen export --from` groups by: the keys the figure was grouped by (for
        // "settings" the ones that differed then), so the rebuild draws the same groups.
        const bool settings = o.group == CompareGroup::Settings;
        grouping["group"] =
            QString::fromLatin1(compareGroupName(settings ? CompareGroup::Keys : o.group));
        QJsonArray keys;
        for (const auto& k : settings ? m_groupedBy : o.keys)
            keys.append(QString::fromStdString(k));
        grouping["keys"] = keys;
        grouping["band"] = QString::fromStdString(engine::bandKindName(o.band));
        grouping["baselines"] = m_baselines->isChecked();
        figures::writeProvenance(
            path.toStdString(),
            figures::multiRunProvenance(m_sources, m_method->currentText().toStdString(), grouping,
                                        [this] {
                                            auto shown = view();
                                            shown.hidden = plots::hiddenSeries(*m_plot);
                                            shown.colors = figures::seriesColors(m_spec);
                                            return shown;
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
    // Any logged column of the runs by step, grouped and banded like the methods (issue 55);
    // the training loss when nothing is evaluated yet.
    if (!methods.empty())
        m_method->insertSeparator(m_method->count());
    for (const auto& m : loggedCompareMethods())
        m_method->addItem(QString::fromStdString(m));
    const int i = m_method->findText(!keep.isEmpty()   ? keep
                                     : methods.empty() ? QStringLiteral("training: loss")
                                                       : QStringLiteral("ood_length"));
    m_method->setCurrentIndex(i >= 0 ? i : 0);
    draw();
    fillDifferences();
}

void CompareView::fillDifferences()
{
    std::vector<figures::ComparedRun> runs;
    const std::string method = m_method->currentText().toStdString();
    QStringList names;
    for (const auto& run : m_runs) {
        try {
            const auto info = engine::readRunInfo(engine::locateRunFile(run.toStdString()));
            figures::ComparedRun r{
                engine::storedRunConfig(info.configYaml, info.path), info.reached, {}};
            try {  // an analysis file being written or damaged: the run's column stays, unevaluated
                for (auto& e : engine::readEvaluations(run.toStdString()))
                    if (e.method == method && e.source == "lengen" && e.intervention.empty())
                        r.evaluated = std::move(e);
            } catch (const std::exception&) {
            }
            runs.push_back(std::move(r));
            names << QString::fromStdString(figures::runLegend(info));
        } catch (const std::exception&) {
            // An unreadable run has no config to compare; the figure's line says why.
        }
    }
    const auto diffs = figures::compareDifferences(runs, method);
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
    m_diff->setVisible(runs.size() > 1 && !diffs.empty());
    m_diffTitle->setText(
        runs.size() < 2 ? QString()
        : diffs.empty() ? tr("The compared runs' configs are the same.")
                        : tr("Config keys that differ between the compared runs (%n):", nullptr,
                             int(diffs.size())));
    m_diff->resizeColumnsToContents();
}

QString CompareView::infoText() const { return m_info->text(); }
QString CompareView::infoToolTip() const { return m_info->toolTip(); }

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

bool CompareView::followsLogs() const
{
    return isLoggedMethod(m_method->currentText().toStdString());
}

void CompareView::draw()
{
    // What the figure drawn now is made of: a logged column follows run.h5 as it trains.
    m_stamp = runFilesStamp(m_runs, followsLogs());
    if (!m_live)
        m_state->forget();  // other data: the user's zoom was of another figure
    m_missing.clear();
    m_sources.clear();
    m_hover->clear();  // the read-out of the previous figure is not this one's
    if (m_runs.isEmpty() || m_method->currentText().isEmpty()) {
        if (!m_runs.isEmpty())
            m_missing = m_runs;
        m_evaluate->setVisible(!m_missing.isEmpty());
        m_info->setText(m_runs.isEmpty()
                            ? tr("Select runs in the browser and press “Compare selected”.")
                            : tr("None of the selected runs is evaluated yet."));
        return;
    }
    m_panels.reset();
    if (m_method->currentText() == allMethodsText())
        return drawPanels();
    m_plot->setMinimumHeight(0);
    try {
        auto result = compareRuns(m_runs, m_method->currentText().toStdString(),
                                  m_baselines->isChecked(), options());
        m_spec = std::move(result.figure);
        m_sources = std::move(result.sources);
        m_groupedBy = result.keys;
        m_missing = result.missing;
        figures::applyView(m_spec, view());
        plots::buildFigure(*m_plot, m_spec);
        Q_EMIT colorsChanged();
        const auto shown = m_runs.size() - m_missing.size();
        QString text = m_runs.size() == 1
                           ? tr("1 run")
                           : tr("%1 of %2 runs compared").arg(shown).arg(m_runs.size());
        QString tip;
        if (!m_missing.isEmpty()) {
            QStringList names;
            for (const auto& r : m_missing)
                names << runName(r);
            // Said, not silently dropped: which runs have no curve here, and why; a long list
            // goes to the tooltip, so the line stays one line above the figure.
            tip = tr("Not evaluated with %1:\n%2").arg(m_method->currentText(), names.join('\n'));
            text += names.size() <= 2
                        ? tr("; left out, not evaluated with %1: %2")
                              .arg(m_method->currentText(), names.join(", "))
                        : tr("; %1 runs left out, not evaluated with %2 (hover for which)")
                              .arg(names.size())
                              .arg(m_method->currentText());
        }
        if (!result.keys.empty()) {
            QStringList keys;
            for (const auto& k : result.keys)
                keys << QString::fromStdString(k);
            text += tr("; grouped by %1").arg(keys.join(", "));
        }
        for (const auto& note : result.notes)  // groups that mix more than the grouping keys
            text += QStringLiteral("; ") + note;
        m_info->setText(text);
        m_info->setToolTip(tip);
    } catch (const std::exception& e) {
        m_info->setText(QString::fromUtf8(e.what()));
    }
    // A run without a log of the column is not made by evaluating it.
    m_evaluate->setVisible(!m_missing.isEmpty() &&
                           !isLoggedMethod(m_method->currentText().toStdString()));
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
            if (method == allMethodsText() || method.isEmpty() ||
                isLoggedMethod(method.toStdString()))
                continue;  // the evaluation methods only: a log has no in-context axis
            auto result =
                compareRuns(m_runs, method.toStdString(), m_baselines->isChecked(), options());
            auto panel = std::move(result.figure);
            figures::applyView(panel, view());
            const auto& missing = result.missing;
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
    const int rows = (int(grid.panels.size()) + grid.columns - 1) / grid.columns;
    m_plot->setMinimumHeight(rows * 260 + 60);  // the title and the legend's margin
    plots::buildGrid(*m_plot, grid);
    Q_EMIT colorsChanged();
    // One line above the panels (a list of every run and method squeezed the figure): the
    // count here, which ones in the tooltip.
    m_info->setText(tr("%n method(s) side by side", nullptr, int(grid.panels.size())) +
                    (leftOut.isEmpty()
                         ? QString()
                         : tr("; %n curve(s) left out, not evaluated (hover for which)", nullptr,
                              int(leftOut.size()))));
    m_info->setToolTip(
        leftOut.isEmpty() ? QString() : tr("Left out, not evaluated:\n%1").arg(leftOut.join('\n')));
    m_panels = std::move(grid);
    m_evaluate->setVisible(false);  // Evaluate them asks for one method: choose it above
}

}  // namespace lengen::ui
