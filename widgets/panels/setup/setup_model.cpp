#include "setup_model.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>

#include <algorithm>

#include "lengen/engine/encodings.h"

namespace lengen::ui {

namespace {

// The texts keep the panel's translation context: they are what the Set up tab says.
QString setupTr(const char* text, const char* disambiguation = nullptr, int n = -1)
{
    return QCoreApplication::translate("lengen::ui::SetupPanel", text, disambiguation, n);
}

QString derivedText(const engine::RunConfig& c)
{
    QStringList parts;
    for (const auto& part : engine::derivedSettings(c))
        parts << QString::fromStdString(part);
    return setupTr("derived: %1").arg(parts.join(QStringLiteral(" · ")));
}

}  // namespace

QString SetupModel::trainTip() const
{
    if (canTrain())
        return setupTr("Start now, or after the runs already queued");
    if (!m_draft.valid())
        return setupTr("The config has problems (listed above): fix them to train");
    return setupTr("Not applied: %1. Type a value the field accepts to train")
        .arg(m_refused.join(QStringLiteral(", ")));
}

QString SetupModel::sweepTip() const
{
    return canTrain() ? setupTr("The Sweeps tab's New sweep on this config: position encodings, "
                                "seeds, tasks and config axes, run here or on Slurm")
                      : trainTip();
}

// What Train will run: the Steps field overrides the config's max_steps (issue 41: the summary
// said 3000 while the run trained 20).
QString SetupModel::summary() const
{
    if (!m_draft.valid() || m_draft.runs().empty())
        return {};
    const auto& c = m_draft.runs().front();
    const bool overridden = m_steps > 0 && m_steps != c.training.maxSteps;
    auto trained = c;  // what Train will run
    if (m_steps > 0)
        trained.training.maxSteps = m_steps;
    // A Steps field showing a value it refused trains nothing yet: say that, not the last
    // value it held (issue 80, defect 27).
    const auto refusedSteps =
        std::find_if(m_refused.begin(), m_refused.end(),
                     [](const QString& f) { return f.startsWith(setupTr("Steps")); });
    // A refused Steps trains nothing yet: no warning about the number it held before.
    const auto shortfall =
        refusedSteps != m_refused.end() ? std::string() : engine::curriculumShortfall(trained);
    const QString steps = refusedSteps != m_refused.end()
                              ? setupTr("%1 not applied").arg(*refusedSteps)
                          : overridden ? setupTr("%1 steps (Steps field; the config says %2)")
                                             .arg(m_steps)
                                             .arg(c.training.maxSteps)
                                       : setupTr("%1 steps").arg(c.training.maxSteps);
    return setupTr("✔ %1 (%2), %3 + %4: H %5 × %6 layers × %7 heads; D = %8, %9 points; "
                   "%10 × batch %11%12")
               .arg(QString::fromStdString(c.task.name), QString::fromStdString(c.task.data),
                    QString::fromStdString(c.model.family),
                    QString::fromStdString(c.peDisplayName()))
               .arg(c.model.hiddenSize)
               .arg(c.model.numLayers)
               .arg(c.model.numHeads)
               .arg(c.inputDims())
               .arg(c.trainPoints())
               .arg(steps)
               .arg(c.training.batchSize)
               .arg(m_draft.runs().size() > 1
                        ? setupTr("; %1 runs (max_length list)").arg(m_draft.runs().size())
                        : QString()) +
           QStringLiteral("\n") + derivedText(c) +
           (shortfall.empty() ? QString()
                              : QStringLiteral("\n⚠ ") + QString::fromStdString(shortfall));
}

std::optional<TrainRequest> SetupModel::request(const std::string& outDir,
                                                const std::string& device) const
{
    if (!canTrain())
        return std::nullopt;
    TrainRequest r;
    r.runs = m_draft.runs();
    r.label = labelFor(r.runs.front());
    r.options.outDir = outDir;
    r.options.device = device;
    if (m_steps > 0)
        r.options.maxSteps = m_steps;
    if (m_seed > 0)
        r.options.seed = std::uint64_t(m_seed);
    return r;
}

SweepBase SetupModel::sweepBase() const
{
    if (!m_draft.valid() || m_draft.runs().empty())
        return {{},
                setupTr("The Set up tab's config has problems (listed there): fix them to "
                        "make a sweep of it")};
    if (!m_refused.isEmpty())
        return {{},
                setupTr("%1 is not applied (Set up): type a value the field accepts, then "
                        "New sweep")
                    .arg(m_refused.join(QStringLiteral(", ")))};
    SweepBase base{m_draft.runs(), {}};
    if (m_steps > 0)
        for (auto& run : base.runs)
            run.training.maxSteps = m_steps;
    return base;
}

QString SetupModel::labelFor(const engine::RunConfig& run)
{
    return QStringLiteral("%1 · %2").arg(QString::fromStdString(run.task.name),
                                         QString::fromStdString(run.peDisplayName()));
}

void SetupModel::setFile(const QString& path)
{
    m_file = path.isEmpty() ? QString() : QFileInfo(path).absoluteFilePath();
    m_edited = false;
}

QString SetupModel::sourceName() const
{
    if (m_file.isEmpty())
        return setupTr("<editor>");
    return m_edited ? setupTr("editor (edited from %1)").arg(QFileInfo(m_file).fileName()) : m_file;
}

QString SetupModel::editedName() const
{
    return m_file.isEmpty() ? QStringLiteral("the editor") : QFileInfo(m_file).fileName();
}

QString SetupModel::folder() const
{
    return m_file.isEmpty() ? QDir::currentPath() : QFileInfo(m_file).absolutePath();
}

QString SetupModel::defaultSavePath(const QString& configRoot) const
{
    const QFileInfo file(m_file);
    const QString root = QFileInfo(configRoot).absoluteFilePath();
    const bool shipped = m_file.isEmpty() || file.absoluteFilePath().startsWith(root + '/');
    if (!shipped)
        return m_file;
    QString base = m_file.isEmpty() ? QStringLiteral("run_config") : file.completeBaseName();
    if (m_draft.valid() && !m_draft.runs().empty()) {
        const auto& run = m_draft.runs().front();
        base = QString::fromStdString(run.task.name + "_" + engine::encodingOf(run).name);
    }
    return QDir::current().filePath(base + QStringLiteral(".yaml"));
}

}  // namespace lengen::ui
