#include "attention_grid.h"

#include <QGridLayout>
#include <QLabel>
#include <QPixmap>
#include <QScrollArea>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

#include "figure_builder.h"
#include "run_figures.h"

namespace lengen::ui {

AttentionGrid::AttentionGrid(QWidget* parent) : QWidget(parent)
{
    auto* inner = new QWidget;
    m_grid = new QGridLayout(inner);
    m_grid->setSpacing(4);
    auto* scroll = new QScrollArea;
    scroll->setWidget(inner);
    scroll->setWidgetResizable(true);
    m_message = new QLabel;
    m_message->setWordWrap(true);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_message);
    layout->addWidget(scroll, 1);
}

void AttentionGrid::clear()
{
    while (auto* item = m_grid->takeAt(0)) {
        delete item->widget();
        delete item;
    }
    m_count = 0;
}

void AttentionGrid::show(const QString& runFile, const QString& setting, int prompt, bool logScale)
{
    clear();
    if (runFile.isEmpty() || setting.isEmpty()) {
        m_message->clear();
        return;
    }
    figures::MapThumbnails t;
    try {
        t = figures::mapThumbnails(runFile.toStdString(), setting.toStdString(), prompt, kThumb);
    } catch (const std::exception& e) {
        m_message->setText(QString::fromUtf8(e.what()));
        Q_EMIT statusMessage(m_message->text());
        return;
    }
    // One colour range for all thumbnails, so a bright head is brighter than a dim one.
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    for (const auto& map : t.maps)
        for (float v : map)
            if (std::isfinite(v) && v > 0) {
                lo = std::min(lo, double(v));
                hi = std::max(hi, double(v));
            }
    if (!(hi > 0))
        lo = 1e-4, hi = 1;
    if (logScale)
        lo = std::max(lo, hi * 1e-4);
    else
        lo = 0;
    m_message->setText(
        tr("Prompt %1 of “%2”, %3 tokens: each map pooled to %4 × %4 cells (the "
           "maximum of each block), one colour range (%5 – %6%7). Click a map to open it.")
            .arg(prompt)
            .arg(setting)
            .arg(t.tokens)
            .arg(t.size)
            .arg(lo, 0, 'g', 2)
            .arg(hi, 0, 'g', 2)
            .arg(logScale ? tr(", log") : QString()));
    for (int h = 0; h <= t.heads; ++h) {
        auto* label = new QLabel(h < t.heads ? tr("head %1").arg(h) : tr("mean"));
        label->setAlignment(Qt::AlignCenter);
        m_grid->addWidget(label, 0, h + 1);
    }
    for (int l = 0; l < t.layers; ++l) {
        m_grid->addWidget(new QLabel(tr("layer %1").arg(l)), l + 1, 0);
        for (int h = 0; h <= t.heads; ++h) {
            const auto& map = t.maps.at(size_t(l * (t.heads + 1) + h));
            const QImage image = plots::heatmapImage(map, t.size, t.size, lo, hi, logScale);
            auto* button = new QToolButton;
            button->setIcon(QPixmap::fromImage(
                image.scaled(kThumb, kThumb, Qt::IgnoreAspectRatio, Qt::FastTransformation)));
            button->setIconSize(QSize(kThumb, kThumb));
            button->setAutoRaise(true);
            const int head = h < t.heads ? h : -1;
            button->setToolTip(head >= 0 ? tr("layer %1, head %2").arg(l).arg(h)
                                         : tr("layer %1, mean over heads").arg(l));
            button->setObjectName(QStringLiteral("thumb_%1_%2").arg(l).arg(head));
            connect(button, &QToolButton::clicked, this,
                    [this, l, head] { Q_EMIT picked(l, head); });
            m_grid->addWidget(button, l + 1, h + 1);
            ++m_count;
        }
    }
    m_grid->setRowStretch(t.layers + 1, 1);
    m_grid->setColumnStretch(t.heads + 2, 1);
}

}  // namespace lengen::ui
