// Compare's controls (issue 70, issue 72): the method, grouping, keys and band choosers, the
// view switches, a logged column's smoothing and x axis, Copy and Export; each forwards the
// choice to CompareModel and redraws. GUI thread.
#include "compare_view.h"

#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalBlocker>
#include <QSlider>

#include <algorithm>
#include <utility>

#include "curve_interactions.h"
#include "export_dialog.h"
#include "qcp.h"

namespace lengen::ui {

namespace {

// A method as part of a file's name: "training: loss" -> "training_loss" (no colon or space
// in a suggested file name; issue 72).
QString fileNamePart(QString method)
{
    method.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9._+=-]+")), QStringLiteral("_"));
    return method;
}

}  // namespace

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
    m_legendOutside->setChecked(true);  // CompareChoices' default: off the curves
    bar->addWidget(m_logY);
    bar->addWidget(m_legendOutside);
    auto* copyButton = new QPushButton(tr("Copy"));
    auto* exportButton = new QPushButton(tr("Export…"));
    exportButton->setToolTip(tr("PNG, SVG, PDF or CSV (the plotted data)"));
    bar->addWidget(copyButton);
    bar->addWidget(exportButton);
    // Copy and Export say the same when nothing is drawn (issue 70, defect 11: both did nothing
    // on an empty Compare tab).
    connect(copyButton, &QPushButton::clicked, this, [this] {
        if (!drawsSomething())
            return Q_EMIT statusMessage(nothingText());
        QApplication::clipboard()->setPixmap(m_plot->toPixmap());
        Q_EMIT statusMessage(tr("Figure copied to the clipboard"));
    });
    connect(exportButton, &QPushButton::clicked, this, [this] {
        if (!drawsSomething())
            return Q_EMIT statusMessage(nothingText());
        askExportTarget(this, tr("Export comparison"),
                        panels()
                            ? QStringLiteral("compare_methods.png")
                            : QStringLiteral("compare_%1.png").arg(fileNamePart(m_model.method())),
                        [this](const ExportChoice& target) {
                            QString error;
                            reportExport(this, exportTo(target.path, target.dpi, &error), error);
                        });
    });
    return bar;
}

// The row under the bar for a logged column ("training: loss"): the Train tab's EMA slider and
// TensorBoard's step / relative / wall x axis. Hidden for an evaluation method.
QWidget* CompareView::buildLoggedRow()
{
    m_loggedRow = new QWidget;
    auto* row = new QHBoxLayout(m_loggedRow);
    row->setContentsMargins(0, 0, 0, 0);
    m_smoothing = new QSlider(Qt::Horizontal);
    m_smoothing->setObjectName(QStringLiteral("compareSmoothing"));
    m_smoothing->setRange(0, 99);
    m_smoothing->setMaximumWidth(220);
    m_smoothing->setToolTip(tr("EMA smoothing of each run's logged column, before runs are "
                               "grouped (0: raw)"));
    m_smoothingValue = new QLabel(QStringLiteral("0.00"));
    m_loggedX = new QComboBox;
    m_loggedX->setObjectName(QStringLiteral("compareLoggedX"));
    for (auto [text, x] : {std::pair{tr("step"), LoggedX::Step},
                           {tr("relative time"), LoggedX::Relative},
                           {tr("wall time"), LoggedX::Wall}})
        m_loggedX->addItem(text, int(x));
    m_loggedX->setToolTip(tr("Relative time: each run's training clock; wall time: its creation "
                             "plus that clock, from the earliest compared run's creation"));
    row->addWidget(new QLabel(tr("Smoothing")));
    row->addWidget(m_smoothing);
    row->addWidget(m_smoothingValue);
    row->addSpacing(12);
    row->addWidget(new QLabel(tr("x axis:")));
    row->addWidget(m_loggedX);
    row->addStretch(1);
    m_loggedRow->setVisible(false);
    return m_loggedRow;
}

void CompareView::connectControls()
{
    plots::enableCurveInteractions(*m_plot,
                                   [this](const QString& text) { m_hover->setText(text); });
    connect(m_method, &QComboBox::currentIndexChanged, this, [this] {
        if (!m_model.setMethod(m_method->currentText()))
            return;  // a separator
        draw();
        fillDifferences();  // its evaluation rows are the method's
    });
    connect(m_baselines, &QCheckBox::toggled, this, [this](bool on) {
        m_model.setBaselines(on);
        draw();
    });
    const auto regroup = [this] {
        const auto group = CompareGroup(m_group->currentData().toInt());
        m_keys->setVisible(group == CompareGroup::Keys);
        m_model.setGrouping(group, m_keys->text(), engine::BandKind(m_band->currentData().toInt()));
        draw();
    };
    connect(m_group, &QComboBox::currentIndexChanged, this, regroup);
    connect(m_keys, &QLineEdit::editingFinished, this, regroup);
    connect(m_band, &QComboBox::currentIndexChanged, this, regroup);
    const auto redrawKeepingHidden = [this] {
        const QStringList hidden = plots::hiddenSeries(*m_plot);  // the same curves
        draw();
        plots::hideSeries(*m_plot, hidden);
    };
    connect(m_logY, &QCheckBox::toggled, this, [this, redrawKeepingHidden](bool on) {
        m_model.setLogY(on);
        redrawKeepingHidden();
    });
    connect(m_legendOutside, &QCheckBox::toggled, this, [this, redrawKeepingHidden](bool on) {
        m_model.setLegendOutside(on);
        redrawKeepingHidden();
    });
    connect(m_smoothing, &QSlider::valueChanged, this, [this, redrawKeepingHidden](int v) {
        m_model.setSmoothing(v / 100.0);
        m_smoothingValue->setText(QString::number(v / 100.0, 'f', 2));
        redrawKeepingHidden();
    });
    connect(m_loggedX, &QComboBox::currentIndexChanged, this, [this, redrawKeepingHidden] {
        m_model.setLoggedX(LoggedX(m_loggedX->currentData().toInt()));
        redrawKeepingHidden();
    });
}

void CompareView::setView(bool logY, bool legendOutside)
{
    m_logY->setChecked(logY);
    m_legendOutside->setChecked(legendOutside);
}

// Both through the model, then the controls as it says (showChoices) and one redraw.
void CompareView::setGrouping(CompareGroup group, const QString& keys, engine::BandKind band)
{
    m_model.setGrouping(group, keys, band);
    showChoices();
    draw();
}

void CompareView::setLoggedControls(double smoothing, LoggedX x)
{
    m_model.setSmoothing(smoothing);
    m_model.setLoggedX(x);
    showChoices();
    draw();
}

void CompareView::setChoices(const CompareChoices& choices)
{
    m_model.setChoices(choices);
    showChoices();
    draw();
    fillDifferences();  // its evaluation rows are the method's
}

// The controls as the model's choices say, without their signals (no redraw per control).
void CompareView::showChoices()
{
    const auto& c = m_model.choices();
    const QSignalBlocker a(m_method), b(m_group), d(m_band), e(m_baselines), f(m_logY),
        g(m_legendOutside), h(m_smoothing), i(m_loggedX);
    m_method->setCurrentIndex(std::max(0, m_method->findText(c.method)));
    m_group->setCurrentIndex(std::max(0, m_group->findData(int(c.group))));
    m_keys->setText(c.keys);
    m_keys->setVisible(c.group == CompareGroup::Keys);
    m_band->setCurrentIndex(std::max(0, m_band->findData(int(c.band))));
    m_baselines->setChecked(c.baselines);
    m_logY->setChecked(c.logY.value_or(false));
    m_legendOutside->setChecked(c.legendOutside);
    m_smoothing->setValue(int(std::lround(c.smoothing * 100)));
    m_smoothingValue->setText(QString::number(c.smoothing, 'f', 2));
    m_loggedX->setCurrentIndex(std::max(0, m_loggedX->findData(int(c.x))));
}

}  // namespace lengen::ui
