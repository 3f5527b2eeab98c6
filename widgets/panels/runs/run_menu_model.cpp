// The Runs list's context menu as a model (run_menu_model.h; issue 72).

#include "run_menu_model.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>

namespace lengen::ui {

namespace {

QString runMenuTr(const char* text) { return QCoreApplication::translate("RunMenu", text); }

}  // namespace

QString runsNamed(const QStringList& runs)
{
    return runs.size() == 1 ? QFileInfo(runs.front()).dir().dirName()
                            : runMenuTr("%1 runs").arg(runs.size());
}

std::vector<RunMenuModel::Entry> RunMenuModel::entries() const
{
    const int n = int(m_runs.size());
    const QString what = runsNamed(m_runs);
    const QString oneOnly = runMenuTr("Select one run");
    std::vector<Entry> out;
    out.push_back({Action::Open, runMenuTr("Open %1").arg(n == 1 ? what : QString()).trimmed(),
                   n == 1, n == 1 ? QString() : oneOnly});
    out.push_back({Action::Compare, runMenuTr("Compare %1").arg(what), n >= 1, {}});
    // Offered whether or not the runs have results yet: one queued job per run.
    out.push_back({Action::Evaluate, runMenuTr("Evaluate %1").arg(what), n >= 1, {}});
    out.push_back({Action::Probe, runMenuTr("Probe %1").arg(what), n >= 1, {}});
    out.push_back(
        {Action::Notes,
         n == 1 ? runMenuTr("Notes and tags of %1…").arg(what) : runMenuTr("Tags of %1…").arg(what),
         n >= 1,
         {}});
    out.push_back(
        {Action::OpenFolder, runMenuTr("Open folder"), n == 1, n == 1 ? QString() : oneOnly});
    out.push_back({Action::CopyPaths,
                   n == 1 ? runMenuTr("Copy path") : runMenuTr("Copy %1 paths").arg(n),
                   n >= 1,
                   {}});
    // Every figure of each run (lengen export --all), one queued job per run.
    out.push_back(
        {Action::ExportFigures, runMenuTr("Export figures of %1…").arg(what), n >= 1, {}});
    const QString blocked = removalBlocked();
    out.push_back({Action::Archive, runMenuTr("Archive %1…").arg(what), n >= 1 && blocked.isEmpty(),
                   blocked});
    out.push_back(
        {Action::Delete, runMenuTr("Delete %1…").arg(what), n >= 1 && blocked.isEmpty(), blocked});
    return out;
}

QString RunMenuModel::removalBlocked() const
{
    // A sweep's cell goes with its sweep (its config and state are the sweep's): said here.
    for (int i = 0; i < m_runs.size() && i < m_sweeps.size(); ++i)
        if (!m_sweeps[i].isEmpty())
            return runMenuTr("%1 is a cell of sweep %2: archive or delete the sweep's folder")
                .arg(QFileInfo(m_runs[i]).dir().dirName(), m_sweeps[i]);
    // The studio's own job is the studio's, not "another process" (its lock holds the run).
    for (int i = 0; i < m_runs.size() && i < m_busy.size(); ++i)
        if (!m_busy[i].isEmpty())
            return runMenuTr("this studio is %1 %2: see Jobs (stop it there, or let it end)")
                .arg(m_busy[i], QFileInfo(m_runs[i]).dir().dirName());
    return {};
}

}  // namespace lengen::ui
