#include "run_table_model.h"

#include "figure_builder.h"

#include <cmath>

#include <QColor>
#include <QDirIterator>
#include <QFileInfo>

#include "lengen/engine/analysis.h"
#include "lengen/engine/config.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/run_file.h"

namespace lengen::ui {

RunTableModel::RunTableModel(QObject* parent) : QAbstractTableModel(parent) {}

RunRow RunTableModel::readRow(const QString& runFile)
{
    RunRow r;
    r.path = runFile;
    try {
        const auto info = engine::readRunInfo(runFile.toStdString());
        const auto cfg = engine::storedRunConfig(info.configYaml, info.path);
        r.task = QString::fromStdString(info.task);
        r.pe = QString::fromStdString(info.positionEncoding);
        r.backbone = QString::fromStdString(info.backbone);
        r.runId = QString::fromStdString(info.runId);
        r.seed = qint64(info.seed);
        r.status = QString::fromStdString(info.status);
        r.created = QString::fromStdString(info.createdAt).replace('T', ' ').remove('Z');
        r.dims = cfg.inputDims();
        r.points = cfg.trainPoints();
        r.hidden = cfg.model.hiddenSize;
        r.layers = cfg.model.numLayers;
        r.heads = cfg.model.numHeads;
        r.steps = info.checkpointStep < 0 ? 0 : info.checkpointStep;
        r.totalSteps = info.totalSteps;
        r.finalLoss = info.lastLoss;
        r.hasAnalysis = QFileInfo::exists(QFileInfo(runFile).dir().filePath("analysis.h5"));
        if (r.hasAnalysis) {
            try {
                const auto a = engine::analysisContents(runFile.toStdString());
                for (const auto& m : a.evalMethods)
                    r.evalMethods << QString::fromStdString(m);
                for (const auto& p : a.probes)
                    r.probes << QString::fromStdString(p);
            } catch (const std::exception& e) {  // the run itself is fine; say what is wrong
                r.error = QString::fromUtf8(e.what());
            }
        }
    } catch (const std::exception& e) {
        r.status = QStringLiteral("damaged");
        r.error = QString::fromUtf8(e.what());
        r.task = QFileInfo(runFile).dir().dirName();
    }
    return r;
}

void RunTableModel::setFolders(const QStringList& folders)
{
    beginResetModel();
    m_folders = folders;
    m_rows.clear();
    for (const auto& folder : folders) {
        if (QFileInfo(folder).isFile()) {
            m_rows.push_back(readRow(folder));
            continue;
        }
        QDirIterator it(folder, {QStringLiteral("run.h5")}, QDir::Files, QDirIterator::Subdirectories);
        while (it.hasNext())
            m_rows.push_back(readRow(it.next()));
    }
    endResetModel();
}

int RunTableModel::rowOfPath(const QString& runFile) const
{
    for (size_t i = 0; i < m_rows.size(); ++i)
        if (QFileInfo(m_rows[i].path) == QFileInfo(runFile))
            return static_cast<int>(i);
    return -1;
}

int RunTableModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int RunTableModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant RunTableModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid())
        return {};
    const auto& r = m_rows.at(static_cast<size_t>(index.row()));
    if (role == Qt::ToolTipRole) {
        QString tip = r.path;
        if (!r.evalMethods.isEmpty())
            tip += "\n" + tr("evaluated: %1").arg(r.evalMethods.join(", "));
        if (!r.probes.isEmpty())
            tip += "\n" + tr("probed: %1").arg(r.probes.join(", "));
        return r.error.isEmpty() ? tip : tip + "\n" + r.error;
    }
    if (role == Qt::DecorationRole && index.column() == Task) {
        // The run's colour once a comparison or overlay has drawn it (plots::runColor).
        const auto color = plots::assignedRunColor(r.runId.toStdString());
        return color.empty() ? QVariant() : QVariant(QColor(QString::fromStdString(color)));
    }
    const bool damaged = r.status == QStringLiteral("damaged");
    if (role == Qt::ForegroundRole && damaged)
        return QColor(176, 32, 32);
    // Sorting uses the raw values (numbers sort as numbers).
    const bool sort = role == Qt::UserRole;
    if (role != Qt::DisplayRole && !sort)
        return {};
    if (damaged && !sort) {
        // Nothing of an unreadable run is known: no "0×0×0 / 0" that looks like a real run, but
        // the reason, in the row (the tooltip holds the whole message).
        switch (index.column()) {
        case Task: return r.task;
        case Status: {
            QString reason = r.error;
            reason.remove(QStringLiteral(" (") + r.path + QStringLiteral(")"));
            reason.remove(r.path);
            reason = reason.section(QLatin1Char('\n'), 0, 0).simplified();
            while (reason.endsWith(QLatin1Char(':')) || reason.endsWith(QLatin1Char(' ')))
                reason.chop(1);  // "…: <path>" with the path removed
            if (reason.size() > 90)
                reason = reason.left(89) + QStringLiteral("…");
            return tr("damaged — %1").arg(reason);
        }
        case Pe:
        case Backbone:
        case Created: return QString();
        default: return QStringLiteral("—");
        }
    }
    switch (index.column()) {
    case Task: return r.task;
    case Pe: return r.pe;
    case Backbone: return r.backbone;
    case Seed: return r.seed;  // two seeds of one config are told apart here
    case RunId: return r.runId;
    case Size:
        return sort ? QVariant(r.hidden * 1000 + r.layers)
                    : QVariant(QStringLiteral("%1×%2×%3").arg(r.hidden).arg(r.layers).arg(r.heads));
    case Dims: return r.dims;
    case Points: return r.points;
    case Steps:
        return sort ? QVariant(r.steps) : QVariant(QStringLiteral("%1 / %2").arg(r.steps).arg(r.totalSteps));
    case FinalLoss:  // no log (a run imported from the Python code, or one not yet logged): "—"
        if (sort)
            return std::isnan(r.finalLoss) ? -1.0 : r.finalLoss;
        return std::isnan(r.finalLoss) ? QStringLiteral("—") : QString::number(r.finalLoss, 'g', 4);
    case Created: return r.created;
    case Status: {
        if (sort)
            return r.status;
        QString text = r.status;  // "finished · eval 2 · probes 3": what the analysis views will show
        if (!r.evalMethods.isEmpty())
            text += QStringLiteral(" · eval %1").arg(r.evalMethods.size());
        if (!r.probes.isEmpty())
            text += QStringLiteral(" · probes %1").arg(r.probes.size());
        return text;
    }
    default: return {};
    }
}

QString finalLossDefinition()
{
    return RunTableModel::tr("Final loss: the training loss (one batch) at the last logged step "
                             "(a log row every logging_steps), as `lengen info` reports it");
}

QVariant RunTableModel::headerData(int section, Qt::Orientation o, int role) const
{
    if (o != Qt::Horizontal)
        return {};
    if (role == Qt::ToolTipRole && section == FinalLoss)
        return finalLossDefinition();
    if (role != Qt::DisplayRole)
        return {};
    static const char* names[] = {"Task", "PE", "Backbone", "Seed", "Run id", "Size (H×L×heads)", "D", "Points",
                                  "Steps", "Final loss", "Created (UTC)", "Status"};
    return QString::fromUtf8(names[section]);
}

}  // namespace lengen::ui
