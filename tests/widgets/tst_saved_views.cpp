// Saved views (issue 72): the model keeps a view in the settings and, shared, in the runs
// folder's lengen-views.json, where a colleague's studio finds it; every choice comes back as
// saved; a damaged file is named with its key; `lengen runs --view NAME` takes the view's filter
// and columns. No window.

#include <QFile>
#include <QJsonDocument>
#include <QSettings>
#include <QStandardPaths>
#include <QtTest>

#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

#include "lengen/engine/errors.h"
#include "lengen/engine/saved_views.h"
#include "run_table_model.h"
#include "saved_views_model.h"
#include "test_support.h"

using namespace lengen;

namespace {

ui::StudioView sampleView(const QString& name)
{
    ui::StudioView v;
    v.name = name;
    v.filter = "pe=rope final_loss<2 seed 1";
    v.hiddenColumns = {"backbone", "created"};
    v.extraColumns = {"min_loss", "training.learning_rate"};
    v.sortColumn = "training.learning_rate";
    v.sortDescending = true;
    ui::CompareChoices c;
    c.method = "training: grad norm";
    c.group = ui::CompareGroup::Keys;
    c.keys = "pe, model.num_hidden_layers";
    c.band = engine::BandKind::StdErr;
    c.baselines = true;
    c.logY = false;
    c.legendOutside = false;
    c.smoothing = 0.6;
    c.x = ui::LoggedX::Wall;
    v.compare = c;
    v.hparams =
        figures::HParamsChoice{{"pe", "training.learning_rate", "final_loss"},
                               "pe",
                               {{"final_loss", 0.25, 1.5, "", ""}, {"pe", 0, 1, "ALiBi", "NoPE"}}};
    return v;
}

void checkSame(const ui::StudioView& a, const ui::StudioView& b)
{
    QCOMPARE(a.name, b.name);
    QCOMPARE(a.filter, b.filter);
    QCOMPARE(a.hiddenColumns, b.hiddenColumns);
    QCOMPARE(a.extraColumns, b.extraColumns);
    QCOMPARE(a.sortColumn, b.sortColumn);
    QCOMPARE(a.sortDescending, b.sortDescending);
    QVERIFY(a.compare && b.compare);
    QCOMPARE(a.compare->method, b.compare->method);
    QCOMPARE(int(a.compare->group), int(b.compare->group));
    QCOMPARE(a.compare->keys, b.compare->keys);
    QCOMPARE(int(a.compare->band), int(b.compare->band));
    QCOMPARE(a.compare->baselines, b.compare->baselines);
    QCOMPARE(a.compare->logY, b.compare->logY);
    QCOMPARE(a.compare->legendOutside, b.compare->legendOutside);
    QCOMPARE(a.compare->smoothing, b.compare->smoothing);
    QCOMPARE(int(a.compare->x), int(b.compare->x));
    QCOMPARE(a.compareRuns, b.compareRuns);
    QVERIFY(a.hparams && b.hparams);
    QCOMPARE(a.hparams->axes, b.hparams->axes);
    QCOMPARE(a.hparams->color, b.hparams->color);
    QCOMPARE(a.hparams->brushes.size(), b.hparams->brushes.size());
    for (size_t i = 0; i < a.hparams->brushes.size(); ++i) {
        QCOMPARE(a.hparams->brushes[i].column, b.hparams->brushes[i].column);
        QCOMPARE(a.hparams->brushes[i].low, b.hparams->brushes[i].low);
        QCOMPARE(a.hparams->brushes[i].high, b.hparams->brushes[i].high);
        QCOMPARE(a.hparams->brushes[i].lowCategory, b.hparams->brushes[i].lowCategory);
        QCOMPARE(a.hparams->brushes[i].highCategory, b.hparams->brushes[i].highCategory);
    }
}

void writeText(const QString& path, const QByteArray& text)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    f.write(text);
}

}  // namespace

class TstSavedViews final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void aViewComesBackAsSaved();
    void aSharedViewReachesAColleague();
    void aDamagedFileIsNamedWithItsKey();
    void runsTakesAViewsFilterAndColumns();
    void oldColumnNamesAreReadAsKeysAndWrittenBack();
    void aViewsFileThatIsNoFileIsAConfigError();
};

void TstSavedViews::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);  // settings of its own, not the user's
    QCoreApplication::setOrganizationName(QStringLiteral("lengen-tests"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_saved_views"));
    QSettings().clear();
}

void TstSavedViews::aViewComesBackAsSaved()
{
    QSettings().clear();
    ui::SavedViewsModel m;
    m.setFolders({});
    QVERIFY(m.entries().empty());
    QString error;
    QVERIFY2(m.save(sampleView("rope runs"), false, &error), qPrintable(error));
    QCOMPARE(m.entries().size(), size_t(1));
    QVERIFY(!m.entries().front().shared);
    checkSame(*m.view("rope runs"), sampleView("rope runs"));
    // Kept in the settings: another model (the next session) reads it back.
    ui::SavedViewsModel next;
    next.setFolders({});
    checkSame(*next.view("rope runs"), sampleView("rope runs"));
    // A name of the same view replaces it; a bad name or sharing with no folder is refused.
    auto changed = sampleView("rope runs");
    changed.filter = "pe=nope";
    QVERIFY(m.save(changed, false));
    QCOMPARE(m.entries().size(), size_t(1));
    QCOMPARE(m.view("rope runs")->filter, QStringLiteral("pe=nope"));
    QVERIFY(!m.save(sampleView(""), false, &error));
    QVERIFY2(error.contains("name"), qPrintable(error));
    QVERIFY(!m.save(sampleView("x"), true, &error));
    QVERIFY2(error.contains("no runs folder"), qPrintable(error));
    // Several views, each listed once, by name (only the last was listed: the map's key was
    // read from a view already moved away).
    QVERIFY(m.save(sampleView("b second"), false));
    QVERIFY(m.save(sampleView("a first"), false));
    QCOMPARE(m.entries().size(), size_t(3));
    QCOMPARE(m.entries()[0].name, QStringLiteral("a first"));
    QCOMPARE(m.entries()[1].name, QStringLiteral("b second"));
    QCOMPARE(m.entries()[2].name, QStringLiteral("rope runs"));
    QVERIFY(m.remove("rope runs"));
    QVERIFY(m.remove("a first") && m.remove("b second"));
    QVERIFY(m.entries().empty());
}

void TstSavedViews::aSharedViewReachesAColleague()
{
    QSettings().clear();
    const auto dir = QString::fromStdString(test::scratchDir("views-shared"));
    ui::SavedViewsModel m;
    m.setFolders({dir});
    QString error;
    // The runs Compare showed: one below the folder, one elsewhere.
    auto compared = sampleView("long prompts");
    compared.compareRuns = {dir + "/sweep/000-rope-s1/run.h5", "/elsewhere/run.h5"};
    QVERIFY2(m.save(compared, true, &error), qPrintable(error));
    const QString file = dir + "/lengen-views.json";
    QCOMPARE(m.sharedFile(), file);
    QVERIFY(QFile::exists(file));
    QVERIFY(m.entries().front().shared);
    QVERIFY(m.save(sampleView("another shared"), true, &error));
    // A colleague: nothing in the settings, the same folder.
    QSettings().clear();
    ui::SavedViewsModel colleague;
    colleague.setFolders({dir});
    QCOMPARE(colleague.entries().size(), size_t(2));
    QCOMPARE(colleague.entries()[1].file, file);
    checkSame(*colleague.view("long prompts"), compared);
    // In the file the run below the folder is relative to it: the view follows the folder.
    const auto inFile = engine::readSavedViews(file.toStdString());
    QCOMPARE(inFile[0].compare->runs,
             (std::vector<std::string>{"sweep/000-rope-s1/run.h5", "/elsewhere/run.h5"}));
    const auto moved = QString::fromStdString(test::scratchDir("views-shared-moved"));
    QVERIFY(QFile::copy(file, moved + "/lengen-views.json"));
    ui::SavedViewsModel elsewhere;
    elsewhere.setFolders({moved});
    QCOMPARE(elsewhere.view("long prompts")->compareRuns,
             (QStringList{moved + "/sweep/000-rope-s1/run.h5", "/elsewhere/run.h5"}));
    // Deleting takes it out of the file too.
    QVERIFY(colleague.remove("long prompts", &error));
    QCOMPARE(engine::readSavedViews(file.toStdString()).size(), size_t(1));
}

void TstSavedViews::aDamagedFileIsNamedWithItsKey()
{
    QSettings().clear();
    const auto dir = QString::fromStdString(test::scratchDir("views-damaged"));
    const QString file = dir + "/lengen-views.json";
    ui::SavedViewsModel m;
    for (const auto& [text, key] :
         {std::pair<QByteArray, QString>{"{\"format\": \"lengen-views\", \"version\": 1, "
                                         "\"views\": [{\"name\": \"a\", \"compare\": "
                                         "{\"smoothing\": 1.5}}]}",
                                         "'smoothing'"},
          {"{\"format\": \"lengen-views\", \"version\": 1, \"views\": {}}", "'views'"},
          {"{\"format\": \"something else\"}", "'format'"},
          {"{\"format\": \"lengen-views\", \"version\": 1, \"views\": [{\"name\": \"a\", "
           "\"hparams\": {\"brushes\": [{\"column\": \"x\"}]}}]}",
           "'brushes'"},
          {"{\"format\": \"lengen-views\", \"version\": 1, \"views\": [{\"name\": \"a\"}, "
           "{\"name\": \"a\"}]}",
           "must be unique"},
          {"not json at all", "not JSON"}}) {
        writeText(file, text);
        m.setFolders({dir});
        QVERIFY2(m.problem().contains(file) && m.problem().contains(key), qPrintable(m.problem()));
        QVERIFY(m.entries().empty());
    }
    // An unknown grouping is said when the view is applied, not half applied silently.
    auto stored = ui::storedView(sampleView("v"));
    stored.compare->group = "by-mood";
    QStringList problems;
    const auto v = ui::studioView(stored, &problems);
    QCOMPARE(int(v.compare->group), int(ui::CompareGroup::Settings));
    QVERIFY2(problems.join(" ").contains("by-mood"), qPrintable(problems.join(" ")));
}

void TstSavedViews::runsTakesAViewsFilterAndColumns()
{
    const auto dir = test::scratchDir("views-cli");
    test::trainTiny(dir, "rope", 1);
    test::trainTiny(dir, "rope", 2);
    test::trainTiny(dir, "nope", 1);
    auto view = ui::storedView(sampleView("rope only"));
    view.filter = "pe=rope";
    view.hiddenColumns = {"backbone", "seed", "sweep"};
    view.extraColumns = {"training.learning_rate", "min_loss"};
    engine::storeSavedView(engine::viewsFileFor(dir), view);
    const QString folder = QString::fromStdString(dir);
    auto r = test::runLengen({"runs", folder, "--view", "rope only", "--format", "csv"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const auto lines = r.out.trimmed().split('\n');
    QCOMPARE(lines.size(), qsizetype(3));  // the header and the two RoPE runs
    QVERIFY2(lines.front().startsWith("run,task,pe,training.learning_rate,status"),
             qPrintable(lines.front()));
    QVERIFY(!lines.front().contains("backbone"));
    // Its words are looked for as the Runs list looks for them; --where adds to its terms.
    view.name = "words";
    view.filter = "NoPE";
    engine::storeSavedView(engine::viewsFileFor(dir), view);
    r = test::runLengen({"runs", folder, "--view", "words", "--json"});
    QCOMPARE(r.out.trimmed().split('\n').size(), qsizetype(1));
    QVERIFY(r.err.contains("1 of 3 runs"));
    r = test::runLengen({"runs", folder, "--view", "rope only", "--where", "seed=2", "--json"});
    QVERIFY2(r.err.contains("1 of 3 runs"), qPrintable(r.err));
    // Its sort, as the studio's Runs list sorts (issue 82 §3: the CLI listed by run id).
    view.name = "by seed";
    view.filter.clear();
    for (const bool descending : {true, false}) {
        view.sortColumn = "seed";
        view.sortDescending = descending;
        engine::storeSavedView(engine::viewsFileFor(dir), view);
        r = test::runLengen({"runs", folder, "--view", "by seed", "--json"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QStringList seeds;
        for (const auto& line : r.out.trimmed().split('\n'))
            seeds << QString::number(QJsonDocument::fromJson(line.toUtf8())["seed"].toInt());
        QCOMPARE(seeds, descending ? QStringList({"2", "1", "1"}) : QStringList({"1", "1", "2"}));
    }
    // A view it does not have: exit 64 naming those it has; a damaged file: exit 2 naming it.
    r = test::runLengen({"runs", folder, "--view", "nothing"});
    QCOMPARE(r.code, 64);
    QVERIFY2(r.err.contains("views there: rope only, words"), qPrintable(r.err));
    writeText(folder + "/lengen-views.json", "{\"format\": \"lengen-views\", \"version\": 7}");
    r = test::runLengen({"runs", folder, "--view", "words"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("lengen-views.json") && r.err.contains("'version'"), qPrintable(r.err));
}

// Issue 82, item 3: files written before the keys named the fixed columns by their headers
// ("Backbone", "Created (UTC)"). They are read as keys and the file is written back with keys,
// once; the sort column and order survive the round trip. The studio's model and the engine's
// table are one list: same count, same headers.
void TstSavedViews::oldColumnNamesAreReadAsKeysAndWrittenBack()
{
    const auto dir = test::scratchDir("views-old-names");
    const std::string file = engine::viewsFileFor(dir);
    writeText(QString::fromStdString(file),
              "{\"format\": \"lengen-views\", \"version\": 1, \"views\": [{\"name\": \"old\", "
              "\"columns\": {\"hidden\": [\"Backbone\", \"Created (UTC)\", \"Run id\"], "
              "\"extra\": [\"min_loss\"]}}]}");
    const auto views = engine::readSavedViews(file);
    QCOMPARE(views.size(), size_t(1));
    QCOMPARE(views[0].hiddenColumns, (std::vector<std::string>{"backbone", "created", "run_id"}));
    QVERIFY(views[0].sortColumn.empty());
    QFile f(QString::fromStdString(file));
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray written = f.readAll();
    QVERIFY2(written.contains("\"backbone\"") && !written.contains("Backbone"),
             written.constData());
    // The sort column and order are kept.
    auto sorted = views[0];
    sorted.sortColumn = "final_loss";
    sorted.sortDescending = true;
    engine::storeSavedView(file, sorted);
    const auto back = engine::readSavedViews(file);
    QCOMPARE(back[0].sortColumn, std::string("final_loss"));
    QVERIFY(back[0].sortDescending);
    // A bad order is named with its key.
    writeText(QString::fromStdString(file),
              "{\"format\": \"lengen-views\", \"version\": 1, \"views\": [{\"name\": \"x\", "
              "\"columns\": {\"sort\": {\"column\": \"seed\", \"order\": \"up\"}}}]}");
    try {
        engine::readSavedViews(file);
        QFAIL("an order 'up' was taken");
    } catch (const engine::Error& e) {
        QVERIFY2(QString(e.what()).contains("'order'"), e.what());
    }
    // One list of columns: the model's headers are the engine table's.
    const auto& columns = engine::runListColumns();
    QCOMPARE(int(columns.size()), int(ui::RunTableModel::ColumnCount));
    for (size_t i = 0; i < columns.size(); ++i) {
        QCOMPARE(ui::RunTableModel::columnKey(int(i)), QString::fromStdString(columns[i].key));
        QCOMPARE(engine::runListColumnKey(columns[i].header), columns[i].key);
    }
}

// Issue 81, item 7: whatever stands at lengen-views.json that is no views file is a config
// error (exit 2) naming the file, as a damaged one is. A FIFO, a folder and /dev/zero exited 4,
// a 5 MB file 3, a dangling or looping link 64 ("no such view"); a FIFO is never opened (a read
// would block). `--view ''` names no view: exit 64 (it was ignored).
void TstSavedViews::aViewsFileThatIsNoFileIsAConfigError()
{
    namespace fs = std::filesystem;
    const auto dir = test::scratchDir("views-not-a-file");
    const std::string file = engine::viewsFileFor(dir);
    const QString folder = QString::fromStdString(dir);
    auto expectConfigError = [&](const char* what) {
        const auto r = test::runLengen({"runs", folder, "--view", "v"}, 20000);
        QVERIFY2(r.code == 2 && r.err.contains(QString::fromStdString(file)),
                 qPrintable(QString("%1: exit %2: %3").arg(what).arg(r.code).arg(r.err)));
        ui::SavedViewsModel m;  // the studio's menu says it too
        m.setFolders({folder});
        QVERIFY2(m.problem().contains(QString::fromStdString(file)), what);
    };
    QVERIFY(::mkfifo(file.c_str(), 0644) == 0);
    expectConfigError("a FIFO");
    fs::remove(file);
    fs::create_directory(file);
    expectConfigError("a folder");
    fs::remove(file);
    fs::create_symlink("/dev/zero", file);
    expectConfigError("a link to /dev/zero");
    fs::remove(file);
    fs::create_symlink(dir + "/gone.json", file);
    expectConfigError("a dangling link");
    fs::remove(file);
    fs::create_symlink(file, file);
    expectConfigError("a looping link");
    fs::remove(file);
    {
        std::ofstream big(file);
        big << "{\"format\": \"lengen-views\", \"version\": 1, \"views\": [";
    }
    fs::resize_file(file, 5 << 20);  // past the 4 MiB any views file holds
    expectConfigError("an oversized file");
    if (::geteuid() != 0) {  // root reads whatever the mode says
        engine::writeSavedViews(file, {});
        fs::permissions(file, fs::perms::none);
        expectConfigError("an unreadable file");
    }
    fs::remove(file);
    const auto r = test::runLengen({"runs", folder, "--view", ""});
    QVERIFY2(r.code == 64, qPrintable(r.err));
}

QTEST_GUILESS_MAIN(TstSavedViews)
#include "tst_saved_views.moc"
