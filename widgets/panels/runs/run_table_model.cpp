#include "run_table_model.h"

#include "figure_builder.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <QColor>
#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QHash>
#include <QSet>
#include <QtConcurrent/QtConcurrentRun>

#include "lengen/engine/analysis.h"
#include "lengen/engine/config.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/run_file.h"
#include "lengen/engine/run_index.h"
#include "lengen/engine/run_table.h"

namespace lengen::ui {

RunTableModel::RunTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void RunTableModel::lookDone(const LookResult& r)
{
    // Dropped when the folders were set again meanwhile.
    const bool changed = r.generation == m_generation && applyLooked(r.looked);
    Q_EMIT polled(changed, r.ms);
}

namespace {

QStringList qlist(const std::vector<std::string>& v)
{
    QStringList out;
    for (const auto& s : v)
        out << QString::fromStdString(s);
    return out;
}

}  // namespace

// One reading of a run for every front end: the engine's index entry (run_index.h), which
// `lengen runs` lists too.
RunRow RunTableModel::rowFromEntry(const engine::RunIndexEntry& e)
{
    RunRow r;
    r.path = QString::fromStdString(e.path);
    r.task = QString::fromStdString(e.info.task);
    r.pe = QString::fromStdString(e.info.positionEncoding);
    r.backbone = QString::fromStdString(e.info.backbone);
    r.status = QString::fromStdString(e.info.status);
    r.created = QString::fromStdString(engine::createdText(e));
    r.error = QString::fromStdString(e.error);
    r.runId = QString::fromStdString(e.info.runId);
    r.seed = e.seed;
    r.dims = e.dims;
    r.points = e.points;
    r.hidden = e.hidden;
    r.layers = e.layers;
    r.heads = e.heads;
    r.steps = e.steps;
    r.totalSteps = e.info.totalSteps;
    r.finalLoss = e.info.lastLoss;
    r.hasAnalysis = e.stamp.analysisSize >= 0;
    r.evalMethods = qlist(e.evalMethods);
    r.probes = qlist(e.probes);
    r.tags = qlist(e.info.tags);
    r.notes = QString::fromStdString(e.info.notes);
    r.entry = std::make_shared<const engine::RunIndexEntry>(e);
    return r;
}

RunRow RunTableModel::readRow(const QString& runFile)
{
    return rowFromEntry(engine::readRunEntry(runFile.toStdString()));
}

void RunTableModel::setFolders(const QStringList& folders)
{
    beginResetModel();
    ++m_generation;
    m_folders = folders;
    m_rows.clear();
    // Through each folder's index: 10,000 runs list without opening 10,000 files (issue 42).
    for (const auto& folder : folders) {
        std::vector<engine::RunIndexEntry> entries;
        try {
            entries = engine::indexRuns(folder.toStdString());
        } catch (const std::exception&) {
            // The folder changed while it was listed, twice: the next poll lists what is there.
        }
        for (const auto& e : entries)
            m_rows.push_back(rowFor(e, folder));  // its stamp is the one the index took
    }
    endResetModel();
}

void RunTableModel::showEntries(const std::vector<engine::RunIndexEntry>& entries)
{
    beginResetModel();
    ++m_generation;
    m_folders.clear();
    m_rows.clear();
    for (const auto& e : entries)
        m_rows.push_back(rowFor(e, {}));
    endResetModel();
}

bool RunTableModel::rowMatches(int row, const engine::RunFilterTerm& term) const
{
    return engine::runMatches(*m_rows.at(size_t(row)).entry, term);
}

// Each folder with its rows' entries: shared pointers, so the GUI thread copies nothing.
RunTableModel::Looked RunTableModel::snapshot() const
{
    Looked folders;
    for (const auto& folder : m_folders) {
        folders.push_back({folder, {}, {}});
        for (const auto& r : m_rows)
            if (r.folder == folder)
                folders.back().sent.push_back(r.entry);
    }
    return folders;
}

// What changed in each folder since the entries it was sent (any thread).
RunTableModel::Looked RunTableModel::look(Looked folders)
{
    Looked looked;
    for (auto& f : folders) {
        std::vector<engine::RunIndexEntry> known;
        known.reserve(f.sent.size());
        for (const auto& e : f.sent)
            known.push_back(*e);
        try {
            f.changes = engine::refreshRunIndex(f.folder.toStdString(), known);
            looked.push_back(std::move(f));
        } catch (const std::exception&) {
            // changed under the walk twice: the next look looks again
        }
    }
    return looked;
}

bool RunTableModel::applyLooked(const Looked& looked)
{
    bool changed = false;
    for (const auto& l : looked)
        changed = applyChanges(l) || changed;
    return changed;
}

bool RunTableModel::poll() { return applyLooked(look(snapshot())); }

void RunTableModel::pollInBackground()
{
    if (m_look.busy())
        return;  // the 3 s poll comes again: no look queued behind a slow one
    m_look.submit([folders = snapshot(), generation = m_generation] {
        QElapsedTimer clock;
        clock.start();
        LookResult r;
        r.looked = look(folders);
        r.ms = clock.elapsed();
        r.generation = generation;
        return r;
    });
}

bool RunTableModel::applyChanges(const FolderLook& look)
{
    const auto& folder = look.folder;
    const auto& changes = look.changes;
    if (!changes.any())
        return false;
    std::map<std::string, const engine::RunIndexEntry*> sent;
    for (const auto& e : look.sent)
        sent.emplace(e->path, e.get());
    // A look on a worker reports against the rows it was sent: a row changed since (by a look
    // on the GUI thread meanwhile) is newer than what it read, and stays.
    auto current = [&](const RunRow& row) {
        const auto it = sent.find(row.entry->path);
        return it != sent.end() && it->second == row.entry.get();
    };
    // Runs gone (deleted, moved): their rows go, from the back so indices stay valid.
    const std::set<std::string> removed(changes.removed.begin(), changes.removed.end());
    for (int r = int(m_rows.size()) - 1; r >= 0; --r)
        if (m_rows[size_t(r)].folder == folder && removed.count(m_rows[size_t(r)].entry->path) &&
            current(m_rows[size_t(r)])) {
            beginRemoveRows({}, r, r);
            m_rows.erase(m_rows.begin() + r);
            endRemoveRows();
        }
    std::vector<const engine::RunIndexEntry*> fresh;      // added runs no row holds yet
    auto replace = [&](const engine::RunIndexEntry& e) {  // false: no row holds the run
        for (size_t r = 0; r < m_rows.size(); ++r)
            if (m_rows[r].folder == folder && m_rows[r].entry->path == e.path) {
                if (!current(m_rows[r]))
                    return true;
                m_rows[r] = rowFor(e, folder);
                Q_EMIT dataChanged(index(int(r), 0), index(int(r), columnCount() - 1));
                return true;
            }
        return false;
    };
    for (const auto& e : changes.changed)
        replace(e);
    for (const auto& e : changes.added)
        if (!replace(e))  // a look of the other kind may have added it meanwhile
            fresh.push_back(&e);
    if (!fresh.empty()) {
        const int at = int(m_rows.size());
        beginInsertRows({}, at, at + int(fresh.size()) - 1);
        for (const auto* e : fresh)
            m_rows.push_back(rowFor(*e, folder));
        endInsertRows();
    }
    return true;
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
    return parent.isValid() ? 0 : ColumnCount + int(m_extra.size());
}

void RunTableModel::setExtraColumns(const QStringList& keys)
{
    beginResetModel();
    m_extra = keys;
    m_extra.removeDuplicates();
    for (auto& r : m_rows)
        fillExtra(r);
    endResetModel();
}

RunRow RunTableModel::rowFor(const engine::RunIndexEntry& e, const QString& folder) const
{
    auto row = rowFromEntry(e);
    row.folder = folder;
    fillExtra(row);
    return row;
}

void RunTableModel::fillExtra(RunRow& r) const
{
    r.extra.clear();
    for (const auto& key : m_extra)
        r.extra.push_back(engine::runCell(*r.entry, key.toStdString()));
}

QStringList RunTableModel::availableColumns() const
{
    std::vector<const engine::RunIndexEntry*> entries;
    for (const auto& r : m_rows)
        entries.push_back(r.entry.get());
    QStringList out;
    for (const auto& name : engine::runColumnNames(entries))
        out << QString::fromStdString(name);
    return out;
}

namespace {

// The tooltip of a cell: the run's path and analyses, or the whole text a narrow cell cuts.
QString toolTipOf(const RunRow& r, int column)
{
    if (column == RunTableModel::Notes && !r.notes.isEmpty())
        return r.notes;  // the whole text where the cell shows its first line
    if (column == RunTableModel::Sweep && !r.entry->info.sweepName.empty())
        return RunTableModel::tr("cell %1 of sweep %2; filter with sweep=%2")
            .arg(QString::fromStdString(r.entry->info.sweepCell),
                 QString::fromStdString(r.entry->info.sweepName));
    if (column == RunTableModel::Tags && !r.tags.isEmpty())
        return r.tags.join(QStringLiteral(", "));  // a narrow column elides them
    if ((column == RunTableModel::Dims || column == RunTableModel::Points) &&
        !r.entry->reached.empty())
        return RunTableModel::tr("trained on %1").arg(QString::fromStdString(r.entry->reached));
    QString tip = r.path;
    if (!r.evalMethods.isEmpty())
        tip += "\n" + RunTableModel::tr("evaluated: %1").arg(r.evalMethods.join(", "));
    if (!r.probes.isEmpty())
        tip += "\n" + RunTableModel::tr("probed: %1").arg(r.probes.join(", "));
    return r.error.isEmpty() ? tip : tip + "\n" + r.error;
}

// A damaged run's cell: nothing of an unreadable run is known, so no "0×0×0 / 0" that looks
// like a real run, but the reason, in the row (the tooltip holds the whole message).
QVariant damagedCell(const RunRow& r, int column)
{
    switch (column) {
    case RunTableModel::Task: return r.task;
    case RunTableModel::Status: {
        QString reason = r.error;
        reason.remove(QStringLiteral(" (") + r.path + QStringLiteral(")"));
        reason.remove(r.path);
        reason = reason.section(QLatin1Char('\n'), 0, 0).simplified();
        while (reason.endsWith(QLatin1Char(':')) || reason.endsWith(QLatin1Char(' ')))
            reason.chop(1);  // "…: <path>" with the path removed
        if (reason.size() > 90)
            reason = reason.left(89) + QStringLiteral("…");
        return RunTableModel::tr("damaged — %1").arg(reason);
    }
    case RunTableModel::Pe:
    case RunTableModel::Backbone:
    case RunTableModel::Tags:
    case RunTableModel::Notes:
    case RunTableModel::Sweep:
    case RunTableModel::Created: return QString();
    default: return QStringLiteral("—");
    }
}

// The loss column: "—" without a log; final only once the run finished (while it trains, is
// paused or was stopped, the last logged loss says so: issue 52).
QVariant lossCell(const RunRow& r, bool sort)
{
    if (sort)
        return std::isnan(r.finalLoss) ? -1.0 : r.finalLoss;
    if (std::isnan(r.finalLoss))
        return QStringLiteral("—");
    return r.status == QLatin1String("finished") || r.status == QLatin1String("imported")
               ? QString::number(r.finalLoss, 'g', 4)
               : RunTableModel::tr("last logged %1").arg(r.finalLoss, 0, 'g', 4);
}

}  // namespace

QVariant RunTableModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid())
        return {};
    const auto& r = m_rows.at(static_cast<size_t>(index.row()));
    if (role == Qt::ToolTipRole)
        return toolTipOf(r, index.column());
    if (role == Qt::DecorationRole && index.column() == Task) {
        // The run's colour while a comparison or overlay draws it (plots::drawnRunColor).
        const auto color = plots::drawnRunColor(r.runId.toStdString());
        return color.empty() ? QVariant() : QVariant(QColor(QString::fromStdString(color)));
    }
    const bool damaged = r.status == QStringLiteral("damaged");
    if (role == Qt::ForegroundRole && damaged)
        return QColor(176, 32, 32);
    // Sorting uses the raw values (numbers sort as numbers).
    const bool sort = role == Qt::UserRole;
    if (role != Qt::DisplayRole && !sort)
        return {};
    if (damaged && !sort)
        return damagedCell(r, index.column());
    return cell(r, index.column(), sort);
}

QVariant RunTableModel::cell(const RunRow& r, int column, bool sort) const
{
    if (column >= ColumnCount) {  // a chosen key or result: numbers sort as numbers
        const auto& c = r.extra.at(size_t(column - ColumnCount));
        if (std::isfinite(c.value))
            return sort ? QVariant(c.value)
                        : QVariant(QString::fromStdString(engine::shortNumber(c.value)));
        if (sort && c.text.empty())
            return {};  // no value: sorts before every value
        return QString::fromStdString(c.text);
    }
    switch (column) {
    case Task: return r.task;
    case Pe: return r.pe;
    case Backbone: return r.backbone;
    case Seed:  // two seeds of one config are told apart here
        return r.seed >= 0 || sort ? QVariant(r.seed) : QVariant(tr("unknown"));
    case RunId: return r.runId;
    case Size:
        return sort ? QVariant(r.hidden * 1000 + r.layers)
                    : QVariant(QStringLiteral("%1×%2×%3").arg(r.hidden).arg(r.layers).arg(r.heads));
    // What the run trained on (issue 52), with the curriculum's end where it stopped short.
    case Dims:
        return sort || r.dims >= r.entry->endDims
                   ? QVariant(r.dims)
                   : QVariant(tr("%1 of %2").arg(r.dims).arg(r.entry->endDims));
    case Points:
        return sort || r.points >= r.entry->endPoints
                   ? QVariant(r.points)
                   : QVariant(tr("%1 of %2").arg(r.points).arg(r.entry->endPoints));
    case Steps:
        return sort ? QVariant(r.steps)
                    : QVariant(QStringLiteral("%1 / %2").arg(r.steps).arg(r.totalSteps));
    case FinalLoss: return lossCell(r, sort);
    case Created: return r.created;
    case Status: {
        if (sort)
            return r.status;
        QString text = statusLabel(
            r.status);  // "finished · eval 2 · probes 3": what the analysis views will show
        if (r.status == QLatin1String("running") && !m_jobStates.isEmpty())
            text = m_jobStates.value(QFileInfo(r.path).absoluteFilePath(), text);
        if (!r.evalMethods.isEmpty())
            text += QStringLiteral(" · eval %1").arg(r.evalMethods.size());
        if (!r.probes.isEmpty())
            text += QStringLiteral(" · probes %1").arg(r.probes.size());
        return text;
    }
    case Sweep: return QString::fromStdString(r.entry->info.sweepName);
    case Tags: return r.tags.join(QStringLiteral(", "));
    case Notes: {  // the first line; the filter matches this cell, the tooltip holds the rest
        const QString first = r.notes.section(QLatin1Char('\n'), 0, 0);
        return first.size() < r.notes.size() ? first + QStringLiteral(" …") : first;
    }
    default: return {};
    }
}

void RunTableModel::rereadRun(const QString& runFile)
{
    const int r = rowOfPath(runFile);
    if (r < 0)
        return;
    const QString folder = m_rows[size_t(r)].folder;
    m_rows[size_t(r)] = readRow(m_rows[size_t(r)].path);
    m_rows[size_t(r)].folder = folder;
    fillExtra(m_rows[size_t(r)]);
    Q_EMIT dataChanged(index(r, 0), index(r, columnCount() - 1));
}

void RunTableModel::setJobState(const QString& runFile, const QString& state)
{
    const QString key = QFileInfo(runFile).absoluteFilePath();
    if (m_jobStates.value(key) == state)
        return;
    if (state.isEmpty())
        m_jobStates.remove(key);
    else
        m_jobStates.insert(key, state);
    const int r = rowOfPath(key);
    if (r >= 0)
        Q_EMIT dataChanged(index(r, Status), index(r, Status));
}

QString statusLabel(const QString& status)
{
    return QString::fromStdString(engine::statusLabel(status.toStdString()));
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
    if (section >= ColumnCount)
        return m_extra.value(section - ColumnCount);
    return QString::fromUtf8(engine::runListColumns().at(size_t(section)).header);
}

QString RunTableModel::columnKey(int column)
{
    return QString::fromUtf8(engine::runListColumns().at(size_t(column)).key);
}

int RunTableModel::columnOf(const QString& keyOrHeader)
{
    const auto key = engine::runListColumnKey(keyOrHeader.toStdString());
    const auto& columns = engine::runListColumns();
    for (size_t c = 0; c < columns.size(); ++c)
        if (key == columns[c].key)
            return int(c);
    return -1;
}

QStringList RunTableModel::columnKeys(const QStringList& names)
{
    QStringList keys;
    for (const auto& name : names)
        if (const int c = columnOf(name); c >= 0 && !keys.contains(columnKey(c)))
            keys << columnKey(c);
    return keys;
}

}  // namespace lengen::ui
