#include "figure_view.h"
#include "ask.h"
#include "figure_provenance.h"
#include "open_run_model.h"

#include "curve_interactions.h"
#include "export_dialog.h"
#include "figure_builder.h"
#include "figure_export.h"
#include "layout_check.h"
#include "qcp.h"

#include <algorithm>

#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QHBoxLayout>
#include <QJsonArray>
#include <QLabel>
#include <QMimeData>
#include <QPushButton>
#include <QSlider>
#include <QStackedLayout>
#include <QVBoxLayout>

namespace lengen::ui {

FigureView::FigureView(Filter filter, QString emptyText, QWidget* parent)
    : QWidget(parent), m_filter(std::move(filter)), m_emptyText(std::move(emptyText))
{
    m_choice = new QComboBox;
    m_choice->setMinimumContentsLength(24);
    auto* exportButton = new QPushButton(tr("Export…"));
    exportButton->setToolTip(tr("PNG, SVG, PDF (as shown) or CSV (the plotted data)"));
    auto* copyButton = new QPushButton(tr("Copy"));
    copyButton->setToolTip(tr("Copy the figure to the clipboard"));
    auto* resetButton = new QPushButton(tr("Reset zoom"));
    m_logY = new QCheckBox(tr("log y"));
    m_logY->setToolTip(tr("Logarithmic y axis (errors spanning decades)"));
    m_legendOutside = new QCheckBox(tr("legend outside"));
    m_legendOutside->setToolTip(tr("Put the legend beside the data instead of over it"));
    auto* bar = m_bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Figure:")));
    bar->addWidget(m_choice, 1);
    bar->addWidget(m_logY);
    bar->addWidget(m_legendOutside);
    bar->addWidget(resetButton);
    bar->addWidget(copyButton);
    bar->addWidget(exportButton);
    // The duplicated-example count sweep is a family of figures: a slider steps through it.
    m_sweep = new QSlider(Qt::Horizontal);
    m_sweepLabel = new QLabel;
    auto* sweepBar = new QHBoxLayout;
    sweepBar->addWidget(new QLabel(tr("Noise points:")));
    sweepBar->addWidget(m_sweep, 1);
    sweepBar->addWidget(m_sweepLabel);
    m_sweepRow = new QWidget;
    m_sweepRow->setLayout(sweepBar);
    m_sweepRow->hide();
    connect(m_sweep, &QSlider::valueChanged, this, [this](int i) {
        if (i >= 0 && i < m_sweepNames.size())
            showFigure(m_sweepNames.at(i));
    });
    m_plot = new QCustomPlot;
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    m_plot->setMinimumSize(plots::kPlotMinWidth, plots::kPlotMinHeight);
    m_hover = new QLabel(tr("Hover for values; click a legend entry to hide or show its curve."));
    m_hover->setTextInteractionFlags(Qt::TextSelectableByMouse);
    plots::enableCurveInteractions(*m_plot, [this](const QString& text) {
        m_hover->setText(
            text.isEmpty() ? tr("Hover for values; click a legend entry to hide or show its curve.")
                           : text);
    });
    m_empty = new QLabel(noRunText());  // nothing is open yet: not "no evaluation stored"
    m_empty->setObjectName(QStringLiteral("emptyText"));
    m_empty->setAlignment(Qt::AlignCenter);
    m_empty->setWordWrap(true);
    m_stack = new QStackedLayout;
    m_stack->addWidget(m_empty);
    m_stack->addWidget(m_plot);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addWidget(m_sweepRow);
    layout->addLayout(m_stack, 1);
    layout->addWidget(m_hover);
    connect(m_choice, &QComboBox::currentIndexChanged, this, &FigureView::draw);
    connect(exportButton, &QPushButton::clicked, this, &FigureView::exportWithDialog);
    connect(copyButton, &QPushButton::clicked, this, &FigureView::onCopy);
    connect(resetButton, &QPushButton::clicked, this, &FigureView::draw);
    connect(m_logY, &QCheckBox::toggled, this, &FigureView::draw);
    connect(m_legendOutside, &QCheckBox::toggled, this, &FigureView::draw);
}

void FigureView::setComputeAction(const QString& label, const QString& toolTip)
{
    if (!m_compute) {
        m_compute = new QPushButton;
        m_bar->insertWidget(0, m_compute);
        connect(m_compute, &QPushButton::clicked, this, &FigureView::computeRequested);
    }
    m_compute->setText(label);
    m_compute->setToolTip(toolTip);
    m_compute->setEnabled(!m_run.isEmpty());
}

QPushButton* FigureView::addRunButton(const QString& label, const QString& toolTip)
{
    auto* b = new QPushButton(label);
    b->setToolTip(toolTip);
    b->setEnabled(!m_run.isEmpty());
    m_bar->insertWidget(int(m_runButtons.size()) + (m_compute ? 1 : 0), b);
    m_runButtons << b;
    return b;
}

QStringList FigureView::figureNames() const
{
    QStringList out;
    for (int i = 0; i < m_choice->count(); ++i)
        out << m_choice->itemData(i).toString();
    return out;
}

bool FigureView::showFigure(const QString& name)
{
    const int i = m_choice->findData(name);
    if (i >= 0)
        m_choice->setCurrentIndex(i);
    return i >= 0;
}

QString FigureView::noRunText()
{
    return tr("No run open.\nDouble-click a run in the Runs list (or File ▸ Open run…) to see its "
              "figures.");
}

void FigureView::setRun(const QString& runFile)
{
    const QString keep = m_choice->currentData().toString();
    if (runFile != m_run)
        m_drawn.clear();  // curves hidden in another run's figure stay that run's business
    m_run = runFile;
    if (m_compute)
        m_compute->setEnabled(!m_run.isEmpty());
    for (auto* b : m_runButtons)
        b->setEnabled(!m_run.isEmpty());
    {
        const QSignalBlocker block(m_choice);
        m_choice->clear();
        if (!runFile.isEmpty()) {
            try {
                for (const auto& f : figures::availableFigures(runFile.toStdString()))
                    if (m_filter(f))
                        m_choice->addItem(QString::fromStdString(f.name + "  —  " + f.description),
                                          QString::fromStdString(f.name));
            } catch (const std::exception& e) {
                Q_EMIT statusMessage(QString::fromUtf8(e.what()));
            }
        }
        const int i = m_choice->findData(keep);
        m_choice->setCurrentIndex(i >= 0 ? i : 0);
    }
    draw();
}

void FigureView::draw()
{
    m_spec.reset();
    m_sources.reset();
    m_stack->setCurrentIndex(0);
    // Another run, figure or option: the last read-out belonged to what was drawn before
    // (issue 41: a run without an evaluation still showed the previous run's values).
    m_hover->setText(tr("Hover for values; click a legend entry to hide or show its curve."));
    const QString current = m_choice->currentData().toString();
    m_sweepNames.clear();
    for (const auto& n : figureNames())
        if (n.startsWith(QStringLiteral("noise_points=")))
            m_sweepNames << n;
    const int at = m_sweepNames.indexOf(current);
    m_sweepRow->setVisible(at >= 0 && m_sweepNames.size() > 1);
    if (at >= 0) {
        const QSignalBlocker block(m_sweep);
        m_sweep->setRange(0, int(m_sweepNames.size()) - 1);
        m_sweep->setValue(int(at));
        m_sweepLabel->setText(current.mid(13));
    }
    const QString name = m_choice->currentData().toString();
    if (name.isEmpty() || m_run.isEmpty()) {
        m_empty->setText(m_run.isEmpty() ? noRunText() : m_emptyText);
        return;
    }
    try {
        auto fig = figures::makeFigure(m_run.toStdString(), name.toStdString());
        if (!fig.plot)
            return;
        m_spec = *fig.plot;
        m_sources = fig.sources;
        figures::ViewOptions options;  // hidden curves stay in the spec, hidden on the plot
        options.logY = m_logY->isChecked();
        options.legendOutside = m_legendOutside->isChecked();
        figures::applyView(*m_spec, options);
        // The same figure redrawn (an option toggled) keeps the curves the user hid.
        const QStringList hidden = name == m_drawn ? plots::hiddenSeries(*m_plot) : QStringList{};
        plots::buildFigure(*m_plot, *m_spec);
        plots::hideSeries(*m_plot, hidden);
        m_drawn = name;
        m_stack->setCurrentIndex(1);
    } catch (const std::exception& e) {
        m_empty->setText(QString::fromUtf8(e.what()));
        Q_EMIT statusMessage(QString::fromUtf8(e.what()));
    }
}

QString FigureView::hoverText() const { return m_hover->text(); }

std::optional<plots::FigureSpec> FigureView::shownSpec() const
{
    if (!m_spec)
        return std::nullopt;
    return plots::shownSpec(*m_spec, *m_plot);
}

bool FigureView::exportTo(const QString& path, int dpi, QString* error)
{
    if (!m_spec) {
        if (error)
            *error = tr("no figure to export");
        return false;
    }
    const auto format = plots::formatFromPath(path).value_or(plots::Format::Png);
    plots::ExportResult result;
    const auto visible = *shownSpec();  // what the user sees: hidden curves stay out
    if (format == plots::Format::Csv) {
        result = plots::exportFigure(visible, path, format, dpi);
    } else if (format == plots::Format::Tex) {
        // pgfplots draws the data itself: the ranges the user zoomed to become the axis limits.
        auto zoomed = visible;
        if (auto* rect = m_plot->axisRect()) {
            const auto x = rect->axis(QCPAxis::atBottom)->range(),
                       y = rect->axis(QCPAxis::atLeft)->range();
            zoomed.x.min = x.lower;
            zoomed.x.max = x.upper;
            zoomed.y.min = y.lower;
            zoomed.y.max = y.upper;
        }
        result = plots::exportFigure(zoomed, path, format, dpi);
    } else {
        // A fresh plot at the figure's size, with the ranges the user zoomed to.
        QCustomPlot off;
        plots::buildFigure(off, visible);
        const auto shown = m_plot->axisRects(), copy = off.axisRects();
        for (int i = 0; i < shown.size() && i < copy.size(); ++i)
            for (auto type : {QCPAxis::atBottom, QCPAxis::atLeft})
                copy[i]->axis(type)->setRange(shown[i]->axis(type)->range());
        result = plots::savePlot(off, path, format, visible.widthInches, visible.heightInches, dpi,
                                 QString::fromStdString(visible.title));
    }
    if (!result.ok && error)
        *error = result.error;
    if (result.ok && !m_drawn.isEmpty() && m_sources) {  // what made it, as `lengen export` writes
        try {
            figures::ViewOptions shown;
            shown.hidden = plots::hiddenSeries(*m_plot);
            shown.logY = m_logY->isChecked();
            shown.legendOutside = m_legendOutside->isChecked();
            figures::writeProvenance(
                path.toStdString(),
                figures::figureProvenance(*m_sources, m_drawn.toStdString(), shown));
        } catch (const std::exception& e) {
            if (error)
                *error = QString::fromUtf8(e.what());
            return false;
        }
    }
    return result.ok;
}

QString FigureView::nothingShown() const
{
    if (m_spec)
        return {};
    return m_run.isEmpty() ? tr("Nothing to export: open a run first.")
                           : tr("Nothing to export: no figure is shown.");
}

void FigureView::exportWithDialog()
{
    if (const auto nothing = nothingShown(); !nothing.isEmpty())
        return ask::tell(this, tr("Export figure"), nothing);
    const QString name = m_choice->currentData().toString().replace('/', '_');
    askExportTarget(this, tr("Export figure"), name + ".png", [this](const ExportChoice& target) {
        QString error;
        const bool ok = exportTo(target.path, target.dpi, &error);
        if (ok)
            Q_EMIT statusMessage(tr("Exported %1").arg(target.path));
        reportExport(this, ok, error);
    });
}

QString FigureView::provenanceLine() const
{
    if (m_run.isEmpty() || m_drawn.isEmpty() || !m_sources)
        return {};
    try {
        const auto p = figures::figureProvenance(*m_sources, m_drawn.toStdString(), {});
        const auto r = p["runs"].toArray().first().toObject();
        QString line = QStringLiteral("%1 of run %2 (%3, seed %4, config %5)")
                           .arg(m_drawn, r["run_id"].toString(), r["path"].toString(),
                                r["seed"].toString(), r["config_hash"].toString());
        for (const auto& e : p["evaluations"].toArray()) {
            const auto o = e.toObject();
            line += QStringLiteral("; %1%2: %3 prompts, eval seed %4, checkpoint %5")
                        .arg(o["method"].toString(), o["intervention"].toString().isEmpty()
                                                         ? QString()
                                                         : " + " + o["intervention"].toString())
                        .arg(o["prompts"].toInt())
                        .arg(o["eval_seed"].toString())
                        .arg(qint64(o["checkpoint_step"].toDouble()));
        }
        return line + QStringLiteral("; LenGen %1").arg(p["lengen"].toString());
    } catch (const std::exception&) {
        return {};
    }
}

void FigureView::onCopy()
{
    // The image, and beside it as text one line of what made it (pasted into notes or a
    // caption, it names the run and the stored result). Nothing drawn: what Export says.
    if (const auto nothing = nothingShown(); !nothing.isEmpty())
        return Q_EMIT statusMessage(nothing);
    auto* data = new QMimeData;
    data->setImageData(m_plot->toPixmap().toImage());
    data->setText(provenanceLine());
    QApplication::clipboard()->setMimeData(data);
    Q_EMIT statusMessage(tr("Figure copied to the clipboard, with its provenance as text"));
}

void FigureView::followOpenRun(const OpenRunModel& model)
{
    connect(&model, &OpenRunModel::changed, this, [this](const QString& run) { setRun(run); });
    connect(&model, &OpenRunModel::updated, this, [this](const QString&, OpenRunModel::Part part) {
        if (part == OpenRunModel::Part::Analysis)
            refresh();
    });
}

}  // namespace lengen::ui
