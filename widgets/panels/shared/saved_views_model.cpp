// Saved views (saved_views_model.h; issue 72): the settings' and the folders' views, and the
// values between the panels and the stored form (engine/saved_views.h owns the format).

#include "saved_views_model.h"

#include <QCoreApplication>
#include <QDir>
#include <QSettings>

#include <algorithm>
#include <map>

#include "lengen/engine/errors.h"
#include "lengen/engine/seed_stats.h"

namespace lengen::ui {

namespace {

const QString kSettingsKey = QStringLiteral("savedViews");

QString viewsTr(const char* text) { return QCoreApplication::translate("SavedViews", text); }

std::vector<std::string> stdStrings(const QStringList& list)
{
    std::vector<std::string> out;
    for (const auto& s : list)
        out.push_back(s.toStdString());
    return out;
}

QStringList qStrings(const std::vector<std::string>& list)
{
    QStringList out;
    for (const auto& s : list)
        out << QString::fromStdString(s);
    return out;
}

engine::SavedCompare storedCompare(const CompareChoices& c)
{
    engine::SavedCompare s;
    s.method = c.method.toStdString();
    s.group = compareGroupName(c.group);
    s.keys = c.keys.toStdString();
    s.band = engine::bandKindName(c.band);
    s.baselines = c.baselines;
    s.logY = c.logY;
    s.legendOutside = c.legendOutside;
    s.smoothing = c.smoothing;
    s.x = loggedXName(c.x);
    return s;
}

CompareChoices compareChoices(const engine::SavedCompare& s, const QString& view,
                              QStringList* problems)
{
    CompareChoices c;
    c.method = QString::fromStdString(s.method);
    const auto group = compareGroupFromName(s.group);
    if (!group && problems)
        *problems << viewsTr("view %1: Compare's grouping '%2' is unknown here; grouped by "
                             "settings")
                         .arg(view, QString::fromStdString(s.group));
    c.group = group.value_or(CompareGroup::Settings);
    c.keys = QString::fromStdString(s.keys);
    c.band = engine::bandKindFromName(s.band).value_or(engine::BandKind::Auto);
    c.baselines = s.baselines;
    c.logY = s.logY;
    c.legendOutside = s.legendOutside;
    c.smoothing = s.smoothing;
    const auto x = loggedXFromName(s.x);
    if (!x && problems)
        *problems << viewsTr("view %1: the x axis '%2' is unknown here; by step")
                         .arg(view, QString::fromStdString(s.x));
    c.x = x.value_or(LoggedX::Step);
    return c;
}

// A view's compared runs as a folder's file keeps them: relative to the folder where they lie
// below it (a colleague's copy of the folder is elsewhere), absolute otherwise; and back.
void rebaseRuns(engine::SavedView& view, const QString& folder, bool toRelative)
{
    if (!view.compare)
        return;
    const QDir dir(folder);
    for (auto& run : view.compare->runs) {
        const QString path = QString::fromStdString(run);
        if (toRelative) {
            const QString relative = dir.relativeFilePath(QDir(path).absolutePath());
            if (!relative.startsWith(QStringLiteral("..")))
                run = relative.toStdString();
        } else if (QDir::isRelativePath(path)) {
            run = QDir::cleanPath(dir.absoluteFilePath(path)).toStdString();
        }
    }
}

}  // namespace

engine::SavedView storedView(const StudioView& view)
{
    engine::SavedView s;
    s.name = view.name.toStdString();
    s.filter = view.filter.toStdString();
    s.hiddenColumns = stdStrings(view.hiddenColumns);
    s.extraColumns = stdStrings(view.extraColumns);
    s.sortColumn = view.sortColumn.toStdString();
    s.sortDescending = view.sortDescending;
    if (view.compare) {
        s.compare = storedCompare(*view.compare);
        s.compare->runs = stdStrings(view.compareRuns);
    }
    s.hparams = view.hparams;
    return s;
}

StudioView studioView(const engine::SavedView& stored, QStringList* problems)
{
    StudioView v;
    v.name = QString::fromStdString(stored.name);
    v.filter = QString::fromStdString(stored.filter);
    v.hiddenColumns = qStrings(stored.hiddenColumns);
    v.extraColumns = qStrings(stored.extraColumns);
    v.sortColumn = QString::fromStdString(stored.sortColumn);
    v.sortDescending = stored.sortDescending;
    if (stored.compare) {
        v.compare = compareChoices(*stored.compare, v.name, problems);
        v.compareRuns = qStrings(stored.compare->runs);
    }
    v.hparams = stored.hparams;
    return v;
}

void SavedViewsModel::setFolders(const QStringList& folders)
{
    m_folders = folders;
    reload();
}

std::vector<engine::SavedView> SavedViewsModel::settingsViews() const
{
    std::vector<engine::SavedView> out;
    for (const auto& text : QSettings().value(kSettingsKey).toStringList())
        out.push_back(engine::savedViewFromJson(text.toStdString(), "settings savedViews"));
    return out;
}

void SavedViewsModel::writeSettings(const std::vector<engine::SavedView>& views) const
{
    QStringList texts;
    for (const auto& v : views)
        texts << QString::fromStdString(engine::savedViewJson(v));
    QSettings().setValue(kSettingsKey, texts);
}

void SavedViewsModel::reload()
{
    m_problem.clear();
    std::map<std::string, std::pair<Entry, engine::SavedView>> byName;  // sorted by name
    QStringList problems;
    try {
        for (auto& v : settingsViews()) {
            const std::string name = v.name;  // not v.name: the right side moves v first
            byName[name] = {Entry{QString::fromStdString(name), false, {}}, std::move(v)};
        }
    } catch (const std::exception& e) {
        problems << QString::fromUtf8(e.what());
    }
    for (const auto& folder : m_folders) {  // a shared view wins: what a colleague sees
        const auto file = engine::viewsFileFor(folder.toStdString());
        try {
            for (auto& v : engine::readSavedViews(file)) {
                rebaseRuns(v, folder, false);
                const std::string name = v.name;
                byName[name] = {
                    Entry{QString::fromStdString(name), true, QString::fromStdString(file)},
                    std::move(v)};
            }
        } catch (const std::exception& e) {
            problems << QString::fromUtf8(e.what());
        }
    }
    m_entries.clear();
    m_stored.clear();
    for (auto& [name, entry] : byName) {
        m_entries.push_back(entry.first);
        m_stored.push_back(std::move(entry.second));
    }
    m_problem = problems.join(QStringLiteral("; "));
}

std::optional<StudioView> SavedViewsModel::view(const QString& name, QStringList* problems) const
{
    for (size_t i = 0; i < m_entries.size(); ++i)
        if (m_entries[i].name == name)
            return studioView(m_stored[i], problems);
    return std::nullopt;
}

QString SavedViewsModel::sharedFile() const
{
    return m_folders.isEmpty()
               ? QString()
               : QString::fromStdString(engine::viewsFileFor(m_folders.front().toStdString()));
}

bool SavedViewsModel::save(const StudioView& view, bool shared, QString* error)
{
    try {
        const auto stored = storedView(view);
        engine::checkViewName(stored.name);
        if (shared && m_folders.isEmpty())
            throw engine::Error(engine::ErrorKind::Usage,
                                "no runs folder is followed to share the view with");
        auto views = settingsViews();
        views.erase(std::remove_if(views.begin(), views.end(),
                                   [&](const auto& v) { return v.name == stored.name; }),
                    views.end());
        views.push_back(stored);
        if (shared) {  // the file first: a refusal there leaves the settings as they were
            auto inFolder = stored;
            rebaseRuns(inFolder, m_folders.front(), true);
            engine::storeSavedView(sharedFile().toStdString(), inFolder);
        }
        writeSettings(views);
    } catch (const std::exception& e) {
        if (error)
            *error = QString::fromUtf8(e.what());
        return false;
    }
    reload();
    return true;
}

bool SavedViewsModel::remove(const QString& name, QString* error)
{
    try {
        auto views = settingsViews();
        views.erase(std::remove_if(views.begin(), views.end(),
                                   [&](const auto& v) { return v.name == name.toStdString(); }),
                    views.end());
        for (const auto& folder : m_folders)
            engine::removeSavedView(engine::viewsFileFor(folder.toStdString()), name.toStdString());
        writeSettings(views);
    } catch (const std::exception& e) {
        if (error)
            *error = QString::fromUtf8(e.what());
        reload();
        return false;
    }
    reload();
    return true;
}

}  // namespace lengen::ui
