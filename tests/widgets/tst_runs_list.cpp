// The Runs list and the open run, offscreen, on runs trained here: the filter (text and
// key=value on any config key) and the sort, the offer to import runs of the Python code, notes
// and tags written from the list, results another process stores reaching the open run, and the
// Train tab waiting out a run file that refuses a read for a moment.

#include <QDir>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include "figure_view.h"
#include "lengen/engine/reference_runs.h"
#include "lengen/engine/run_file.h"
#include "open_run_model.h"
#include "reference_import.h"
#include "run_browser.h"
#include "run_controller.h"
#include "run_notes_dialog.h"
#include "run_table_model.h"
#include "run_tags_dialog.h"
#include "test_support.h"
#include "training_view.h"

using namespace lengen;

class TestRunsList final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void browserFiltersAndSorts();
    void browserOffersToImportPythonRuns();
    void browserEditsNotesAndFiltersByThem();
    void resultsStoredElsewhereReachTheOpenRun();
    void rowSaysWhatTheRunTrainedOn();
    void trainingViewWaitsOutAReadThatFailsForAMoment();
    void tagsOfSeveralRunsInOneStep();
    void lookOffTheGuiThreadAddsEachRunOnce();
    void runMenuDeletesAndUndoPutsBack();
    void columnsFitWhatTheyShow();

private:
    std::string m_runs, m_rope, m_alibi;
};

void TestRunsList::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);  // QSettings of its own, not the user's
    QCoreApplication::setOrganizationName(QStringLiteral("lengen-tests"));
    QSettings().remove(QStringLiteral("runsList"));
    m_runs = test::scratchDir("runs-list");
    m_rope = test::trainTiny(m_runs, "rope");
    m_alibi = test::trainTiny(m_runs, "alibi", 4, 30);
}

void TestRunsList::browserOffersToImportPythonRuns()
{
    // A models/ tree of the Python code (made by exporting a LenGen run), added to the browser.
    QTemporaryDir tmp;
    const std::string run = test::trainTiny((tmp.path() + "/trained").toStdString(), "alibi");
    const QString models = tmp.path() + "/models";
    const QString refRun = models + "/linear_regression/dim_2-3/20250224/ab12cd34";
    engine::exportReferenceRun(run, refRun.toStdString());
    ui::RunBrowser browser;
    QSignalSpy found(&browser, &ui::RunBrowser::referenceRunsFound);
    browser.addFolder(models);
    QCOMPARE(found.count(), 1);
    QCOMPARE(found.at(0).at(1).toStringList(), QStringList{refRun});
    QVERIFY2(!browser.folders().contains(models), "a tree without run.h5 is not a runs folder");

    const QString out = tmp.path() + "/runs";
    QCOMPARE(ui::pendingReferenceRuns(models, out), QStringList{refRun});
    // A job of the controller (issue 39: it was a modal dialog over a nested event loop).
    ui::RunController controller;
    auto shared = std::make_shared<ui::ReferenceImportSummary>();
    QSignalSpy finished(&controller, &ui::RunController::runFinished);
    controller.enqueue(ui::JobKind::Import, "import",
                       ui::referenceImportJob({refRun, tmp.path() + "/nowhere"}, out, shared), out);
    QVERIFY(finished.wait(60000));
    QCOMPARE(finished.at(0).at(0).value<ui::JobInfo>().result.done, std::int64_t(1));
    const auto& summary = *shared;
    QCOMPARE(summary.runFiles.size(), 1);
    QCOMPARE(summary.failed, 1);
    QVERIFY2(summary.messages.at(1).contains("nowhere"), qPrintable(summary.messages.join('\n')));
    // The date folder of the Python layout, the run id its config.yaml names (wandb_id).
    const QString id = QString::fromStdString(engine::readRunInfo(run).runId);
    QCOMPARE(summary.runFiles.at(0), out + "/linear_regression/dim_2-3/20250224/" + id + "/run.h5");
    QVERIFY(ui::pendingReferenceRuns(models, out).isEmpty());
    browser.addFolder(out);
    QCOMPARE(browser.visibleRows(), 1);
    QCOMPARE(ui::RunTableModel::readRow(summary.runFiles.at(0)).status, QStringLiteral("imported"));
}

void TestRunsList::browserFiltersAndSorts()
{
    ui::RunBrowser browser;
    browser.setFolders({QString::fromStdString(m_runs)});
    QCOMPARE(browser.visibleRows(), 2);
    browser.setFilterText("alibi");
    QCOMPARE(browser.visibleRows(), 1);
    browser.setFilterText("nothing-like-this");
    QCOMPARE(browser.visibleRows(), 0);
    // Issue 42: key=value reaches any resolved config key, and the columns by name.
    browser.setFilterText("pe=alibi");
    QCOMPARE(browser.visibleRows(), 1);
    browser.setFilterText("model.num_hidden_layers=2");
    QCOMPARE(browser.visibleRows(), 2);
    browser.setFilterText("model.num_hidden_layers=3");
    QCOMPARE(browser.visibleRows(), 0);
    browser.setFilterText("model.num_hidden_layers=2 alibi");  // a term and text together
    QCOMPARE(browser.visibleRows(), 1);
    QVERIFY(browser.filterHint().isEmpty());
    // Issue 52: a key no run has is said, with the nearest key, not left as an empty list.
    browser.setFilterText("model.num_hiden_layers=6");
    QCOMPARE(browser.visibleRows(), 0);
    QCOMPARE(browser.filterHint(),
             QStringLiteral("no run has the key model.num_hiden_layers; did you mean "
                            "model.num_hidden_layers?"));
    browser.setFilterText("pe=nope");  // a column: no hint, only no match
    QCOMPARE(browser.visibleRows(), 0);
    QVERIFY(browser.filterHint().isEmpty());
    browser.setFilterText("");
    QCOMPARE(browser.visibleRows(), 2);
    auto* table = browser.findChild<QTableView*>();
    QVERIFY(table);
    table->sortByColumn(ui::RunTableModel::Steps, Qt::AscendingOrder);
    QCOMPARE(table->model()->index(0, ui::RunTableModel::Pe).data().toString(), QString("RoPE"));
    table->sortByColumn(ui::RunTableModel::Steps, Qt::DescendingOrder);
    QCOMPARE(table->model()->index(0, ui::RunTableModel::Pe).data().toString(), QString("ALiBi"));
    // Seed and run id columns: runs of different seeds are told apart (issue 13).
    QCOMPARE(table->model()->index(0, ui::RunTableModel::Seed).data().toLongLong(), 4LL);
    QCOMPARE(table->model()->index(0, ui::RunTableModel::RunId).data().toString().size(), 8);
    QSignalSpy open(&browser, &ui::RunBrowser::openRequested);
    browser.selectRun(QString::fromStdString(m_rope));
    QCOMPARE(browser.selectedRuns(), QStringList{QString::fromStdString(m_rope)});
    // The selection stays through a filter that keeps the run and a change of columns (a saved
    // view applied both and the selection was gone, issue 72).
    browser.setFilterText("pe=rope");
    QCOMPARE(browser.selectedRuns(), QStringList{QString::fromStdString(m_rope)});
    browser.setExtraColumns({"min_loss"});
    QCOMPARE(browser.selectedRuns(), QStringList{QString::fromStdString(m_rope)});
    browser.setExtraColumns({});
    browser.setFilterText("");
    QCOMPARE(browser.selectedRuns(), QStringList{QString::fromStdString(m_rope)});
}

// Issue 41: notes and tags from the Runs list: the button names the selected run, Save writes
// them into its file, the row shows them at once, and the filter finds the run by them.
void TestRunsList::browserEditsNotesAndFiltersByThem()
{
    ui::RunBrowser browser;
    browser.setFolders({QString::fromStdString(m_runs)});
    const int all = browser.visibleRows();  // earlier tests train runs here too
    auto* button = [&]() -> QPushButton* {
        for (auto* b : browser.findChildren<QPushButton*>())
            if (b->text().startsWith("Notes"))
                return b;
        return nullptr;
    }();
    QVERIFY(button);
    QVERIFY(!button->isEnabled());  // nothing selected
    const QString alibi = QString::fromStdString(m_alibi);
    browser.selectRun(alibi);
    const auto info = engine::readRunInfo(m_alibi);
    QCOMPARE(button->text(), QString("Notes of %1…").arg(QString::fromStdString(info.runId)));
    auto* dialog = browser.editNotes();
    QVERIFY(dialog);
    QVERIFY(!dialog->save("x", "bad,tag," + QString(41, 'y')));  // refused, stays open
    QVERIFY2(dialog->errorText().contains("longer than 40"), qPrintable(dialog->errorText()));
    QVERIFY(dialog->save("slopes look too steep\nretry with 8 heads", "paper-fig3, alibi-check"));
    const auto stored = engine::readRunInfo(m_alibi);
    QCOMPARE(stored.tags, (std::vector<std::string>{"paper-fig3", "alibi-check"}));
    QCOMPARE(stored.notes, std::string("slopes look too steep\nretry with 8 heads"));
    const int row = browser.model()->rowOfPath(alibi);
    QCOMPARE(browser.model()->index(row, ui::RunTableModel::Tags).data().toString(),
             QString("paper-fig3, alibi-check"));
    // The column shows them whole (they were cut with room to spare: issue 70, defect 18).
    auto* table = browser.findChild<QTableView*>();
    QVERIFY(table->columnWidth(ui::RunTableModel::Tags) >=
            table->fontMetrics().horizontalAdvance("paper-fig3, alibi-check"));
    QCOMPARE(browser.model()->index(row, ui::RunTableModel::Notes).data().toString(),
             QString("slopes look too steep …"));
    browser.setFilterText("paper-fig3");
    QCOMPARE(browser.visibleRows(), 1);
    browser.setFilterText("too steep");
    QCOMPARE(browser.visibleRows(), 1);
    browser.setFilterText("tag=paper-fig3");
    QCOMPARE(browser.visibleRows(), 1);
    browser.setFilterText("");
    QCOMPARE(browser.visibleRows(), all);
    // Review: notes changed by another process while the dialog is open are not overwritten.
    browser.selectRun(alibi);
    auto* second = browser.editNotes();
    QVERIFY(second);
    engine::updateRunNotes(m_alibi,
                           [](engine::RunNotes& n) { n.tags.push_back("from-a-terminal"); });
    QVERIFY(!second->save("mine", "mine"));
    QVERIFY2(second->errorText().contains("changed by another process"),
             qPrintable(second->errorText()));
    QCOMPARE(engine::readRunInfo(m_alibi).tags.back(), std::string("from-a-terminal"));
}

// Issue 41 (found under Xvfb): results another process stores for the open run (here the
// engine called directly, as `lengen eval` in a terminal would) reach the views that follow it
// without reopening the run.
void TestRunsList::resultsStoredElsewhereReachTheOpenRun()
{
    const auto run = test::trainTiny(test::scratchDir("watch"), "rope", 7);
    ui::OpenRunModel model;
    model.setWatchInterval(50);
    ui::FigureView eval(
        [](const figures::FigureInfo& f) { return f.kind == figures::FigureKind::Evaluation; },
        "none");
    eval.followOpenRun(model);
    QSignalSpy updated(&model, &ui::OpenRunModel::updated);
    QVERIFY(model.open(QString::fromStdString(run)).isEmpty());
    QVERIFY(eval.figureNames().isEmpty());
    QTest::qWait(200);
    QCOMPARE(updated.count(), 0);            // nothing changed: nothing said
    test::evaluateSmall(run, {"standard"});  // as `lengen eval` in a terminal would
    QVERIFY(QTest::qWaitFor([&] { return !updated.isEmpty(); }, 5000));
    QCOMPARE(updated.first().at(1).value<ui::OpenRunModel::Part>(),
             ui::OpenRunModel::Part::Analysis);
    QCOMPARE(eval.figureNames(), QStringList{"standard"});
}

// Issue 52: a run whose max_steps ends before its curriculum (N 5 -> 7 at step 10, trained 10
// steps) trained on 5 points: its row says so, with the curriculum's end beside it.
void TestRunsList::rowSaysWhatTheRunTrainedOn()
{
    QTemporaryDir tmp;
    const auto run = test::trainTiny(tmp.path().toStdString(), "rope", 4, 10);
    ui::RunBrowser browser;
    browser.setFolders({tmp.path()});
    QCOMPARE(browser.visibleRows(), 1);
    auto* table = browser.findChild<QTableView*>();
    QVERIFY(table);
    const auto points = table->model()->index(0, ui::RunTableModel::Points);
    QCOMPARE(points.data().toString(), QStringLiteral("5 of 7"));
    QCOMPARE(table->model()->index(0, ui::RunTableModel::Dims).data().toString(),
             QStringLiteral("2 of 3"));
    QVERIFY2(points.data(Qt::ToolTipRole)
                 .toString()
                 .contains("trained on 5 points, 2 dims: max_steps (10)"),
             qPrintable(points.data(Qt::ToolTipRole).toString()));
    // Issue 52: the columns are the user's to choose (Backbone and Created hidden by default, so
    // Tags and Notes have room), and the choice is kept for the next Runs list.
    QVERIFY(!browser.columnShown(ui::RunTableModel::Backbone));
    QVERIFY(browser.columnShown(ui::RunTableModel::Tags) &&
            browser.columnShown(ui::RunTableModel::Notes));
    browser.setColumnShown(ui::RunTableModel::Backbone, true);
    browser.setColumnShown(ui::RunTableModel::Seed, false);
    // A column shown from the menu is as wide as what it shows (found under Xvfb, issue 73's
    // walk: Created read "2026-…38:45" at the default width).
    browser.setColumnShown(ui::RunTableModel::Created, true);
    const QString created = table->model()->index(0, ui::RunTableModel::Created).data().toString();
    QVERIFY2(table->columnWidth(ui::RunTableModel::Created) >
                 table->fontMetrics().horizontalAdvance(created),
             qPrintable(created + ": " +
                        QString::number(table->columnWidth(ui::RunTableModel::Created))));
    browser.setColumnShown(ui::RunTableModel::Created, false);
    // Issue 72: a config key or result as a column, offered under "More columns", kept.
    QMenu* columns = browser.showColumnMenu(browser.mapToGlobal(QPoint(10, 10)));
    auto* more = columns->findChild<QMenu*>("moreColumns");
    QVERIFY(more);
    QStringList offered;
    for (auto* a : more->actions())
        offered << a->text();
    QVERIFY2(offered.contains("min_loss") && offered.contains("training.learning_rate"),
             qPrintable(offered.join(", ")));
    columns->close();
    browser.setExtraColumnShown("min_loss", true);
    QCOMPARE(table->model()->headerData(ui::RunTableModel::ColumnCount, Qt::Horizontal).toString(),
             QStringLiteral("min_loss"));
    QCOMPARE(ui::RunBrowser().model()->extraColumns(), QStringList{"min_loss"});
    browser.setExtraColumnShown("min_loss", false);
    ui::RunBrowser next;
    QVERIFY(next.columnShown(ui::RunTableModel::Backbone));
    QVERIFY(!next.columnShown(ui::RunTableModel::Seed));
    next.setColumnShown(ui::RunTableModel::Seed, true);
    next.setColumnShown(ui::RunTableModel::Backbone, false);
    // A run that reached its curriculum's end shows the plain number.
    const auto full = ui::RunTableModel::readRow(QString::fromStdString(m_rope));
    QCOMPARE(full.points, 7);
}

// Issue 52: a run another process writes can refuse a read for a moment; the Train tab keeps
// what it shows and reads again (it flashed 0 % and an empty plot), and shows the run once it
// reads. A file that stays unreadable is said after the retries.
void TestRunsList::trainingViewWaitsOutAReadThatFailsForAMoment()
{
    ui::RunController controller;
    ui::TrainingView view(controller);
    view.showRunLog(QString::fromStdString(m_rope));
    const QString shown = view.headerText();
    const int points = view.loggedPoints();
    QVERIFY(points > 0);
    QTemporaryDir tmp;
    const QString later = tmp.path() + "/later.h5";
    QFile::remove(later);
    QFile junk(later);
    QVERIFY(junk.open(QIODevice::WriteOnly) && junk.write("not yet a run file") > 0);
    junk.close();
    view.showRunLog(later);
    QCOMPARE(view.headerText(), shown);  // nothing replaced by a failed read
    QCOMPARE(view.loggedPoints(), points);
    QVERIFY(QFile::remove(later) && QFile::copy(QString::fromStdString(m_alibi), later));
    QTRY_COMPARE_WITH_TIMEOUT(QFileInfo(view.shownRun()), QFileInfo(later), 3000);
    QCOMPARE(view.loggedPoints(), int(engine::readTrainLog(m_alibi).step.size()));
    // Unreadable for good: said once the retries (about 1.5 s) ran out.
    QVERIFY(QFile::remove(later) && junk.open(QIODevice::WriteOnly) && junk.write("damaged") > 0);
    junk.close();
    view.showRunLog(later);
    QTRY_VERIFY_WITH_TIMEOUT(view.shownRun().isEmpty() && view.headerText().contains("later.h5"),
                             5000);
}

// Issue 55: with several runs selected the Notes button tags all of them in one step (it was
// disabled); the rows show the tags at once, and removing works the same way.
void TestRunsList::tagsOfSeveralRunsInOneStep()
{
    ui::RunBrowser browser;
    browser.setFolders({QString::fromStdString(m_runs)});
    auto* table = browser.findChild<QTableView*>();
    QVERIFY(table);
    table->selectAll();
    const int n = browser.selectedRuns().size();
    QVERIFY(n >= 2);
    QPushButton* button = nullptr;
    for (auto* b : browser.findChildren<QPushButton*>())
        if (b->text().startsWith("Tags of"))
            button = b;
    QVERIFY(button && button->isEnabled());
    QCOMPARE(button->text(), QString("Tags of %1 runs…").arg(n));
    auto* dialog = browser.editTagsOfSelected();
    QVERIFY(dialog && dialog->isVisible());
    QVERIFY(!dialog->apply("ok, " + QString(41, 'y'), ""));  // a bad tag: every run refuses it
    QVERIFY2(dialog->errorText().contains("longer than 40"), qPrintable(dialog->errorText()));
    QVERIFY(dialog->apply("bulk-a, bulk-b", ""));
    for (const auto& run : browser.selectedRuns()) {
        const auto tags = engine::readRunInfo(run.toStdString()).tags;
        QVERIFY(std::find(tags.begin(), tags.end(), "bulk-a") != tags.end() &&
                std::find(tags.begin(), tags.end(), "bulk-b") != tags.end());
        QVERIFY(browser.model()
                    ->index(browser.model()->rowOfPath(run), ui::RunTableModel::Tags)
                    .data()
                    .toString()
                    .contains("bulk-b"));
    }
    browser.setFilterText("tag=bulk-a");
    QCOMPARE(browser.visibleRows(), n);
    browser.setFilterText("");
    table->selectAll();
    dialog = browser.editTagsOfSelected();
    QVERIFY(dialog->commonTagsText().contains("bulk-a, bulk-b"));
    QVERIFY(dialog->apply("", "bulk-a,bulk-b"));
    for (const auto& run : browser.selectedRuns()) {
        const auto tags = engine::readRunInfo(run.toStdString()).tags;
        QVERIFY(std::find(tags.begin(), tags.end(), "bulk-a") == tags.end());
    }
}

// The Runs list's timer looks at its folders on a worker (10,000 runs: a few hundred ms the GUI
// thread no longer waits for). A look on the GUI thread meanwhile (follow(), after a job) adds
// the same new run: the worker's result must not add it twice.
void TestRunsList::lookOffTheGuiThreadAddsEachRunOnce()
{
    QTemporaryDir tmp;
    QVERIFY(QDir().mkpath(tmp.filePath("a")) && QDir().mkpath(tmp.filePath("b")));
    QVERIFY(QFile::copy(QString::fromStdString(m_rope), tmp.filePath("a/run.h5")));
    ui::RunTableModel model;
    model.setFolders({tmp.path()});
    QCOMPARE(model.rowCount(), 1);
    QVERIFY(QFile::copy(QString::fromStdString(m_alibi), tmp.filePath("b/run.h5")));
    QSignalSpy polled(&model, &ui::RunTableModel::polled);
    model.pollInBackground();  // its known rows: a only
    QVERIFY(model.poll());     // the GUI thread's own look adds b now
    QCOMPARE(model.rowCount(), 2);
    QVERIFY(polled.wait(30000) || polled.size() == 1);
    QCOMPARE(model.rowCount(), 2);  // b once: the worker's "added" became a change
    QCOMPARE(model.row(0).runId.isEmpty(), false);
    QVERIFY(model.row(0).path != model.row(1).path);
    // A look off the GUI thread alone picks up a run gone.
    QVERIFY(QFile::remove(tmp.filePath("a/run.h5")));
    model.pollInBackground();
    QVERIFY(polled.wait(30000));
    QCOMPARE(polled.last().at(0).toBool(), true);
    QCOMPARE(model.rowCount(), 1);
}

// Issue 72: a right-click on a row opens the runs' menu with popup() (its entries from
// RunMenuModel); Delete asks, naming the count and size, moves the run to the trash and offers
// Undo, which puts it back with the same bytes.
void TestRunsList::runMenuDeletesAndUndoPutsBack()
{
    QTemporaryDir tmp;
    QVERIFY(QDir().mkpath(tmp.filePath("a")));
    const QString run = tmp.filePath("a/run.h5");
    QVERIFY(QFile::copy(QString::fromStdString(m_rope), run));
    QFile original(run);
    QVERIFY(original.open(QIODevice::ReadOnly));
    const QByteArray bytes = original.readAll();
    original.close();
    ui::RunBrowser browser;
    browser.setFolders({tmp.path()});
    browser.show();
    QTRY_COMPARE(browser.visibleRows(), 1);
    browser.selectRun(run);
    QMenu* menu = browser.showRunMenu(browser.mapToGlobal(QPoint(20, 60)));
    QVERIFY(QTest::qWaitForWindowExposed(menu));
    QStringList texts;
    for (auto* a : menu->actions())
        if (!a->isSeparator())
            texts << a->text();
    QCOMPARE(texts.size(), 10);  // RunMenuModel::entries(), Export figures included
    QVERIFY2(texts.last().startsWith("Delete "), qPrintable(texts.join(", ")));
    menu->close();
    browser.runMenuAction(ui::RunMenuModel::Action::Delete);
    QMessageBox* ask = nullptr;
    QTRY_VERIFY((ask = browser.findChild<QMessageBox*>("ask-confirm")) != nullptr);
    QVERIFY2(ask->text().startsWith("Move a (") && ask->text().contains(".lengen-trash/") &&
                 ask->text().contains("puts it back"),
             qPrintable(ask->text()));
    ask->button(QMessageBox::Yes)->click();
    QVERIFY(!QFile::exists(run));
    QTRY_COMPARE(browser.visibleRows(), 0);
    auto* undo = browser.findChild<QPushButton*>("runsUndo");
    QVERIFY(undo && undo->isVisible());
    QCOMPARE(browser.findChild<QLabel*>("runsMoved")->text(),
             QStringLiteral("Moved a to the trash"));
    undo->click();
    QVERIFY(QFile::exists(run));
    QFile back(run);
    QVERIFY(back.open(QIODevice::ReadOnly));
    QVERIFY(back.readAll() == bytes);
    QVERIFY(!undo->isVisible());
    QTRY_COMPARE(browser.visibleRows(), 1);
    // Put back from a terminal instead (found under Xvfb): an Undo pressed then says nothing
    // wrong and leaves.
    browser.selectRun(run);
    browser.runMenuAction(ui::RunMenuModel::Action::Archive);
    const auto shownAsk = [&] {  // the new box, not the Delete's (deleted later)
        for (auto* box : browser.findChildren<QMessageBox*>("ask-confirm"))
            if (box->isVisible())
                return box;
        return static_cast<QMessageBox*>(nullptr);
    };
    QTRY_VERIFY((ask = shownAsk()) != nullptr);
    QVERIFY2(ask->text().contains(".lengen-archive/"), qPrintable(ask->text()));
    ask->button(QMessageBox::Yes)->click();
    QVERIFY(undo->isVisible() && !QFile::exists(run));
    const auto restored = test::runLengen({"restore", tmp.filePath(".lengen-archive/a")});
    QVERIFY2(restored.code == 0, qPrintable(restored.err));
    QVERIFY(QFile::exists(run));
    undo->click();
    QVERIFY(!undo->isVisible());
    QVERIFY2(!browser.findChild<QLabel*>("runsMoved")->isVisible(),
             qPrintable(browser.findChild<QLabel*>("runsMoved")->text()));
}

// Issue 80 defect 14: cells read "fini…al 2", "230…000", seed "33…88": every column but the
// last (it stretches) is as wide as what its visible rows show, up to 260 px, also for a row a
// poll adds; a column the user resized keeps its width.
void TestRunsList::columnsFitWhatTheyShow()
{
    QTemporaryDir tmp;
    QVERIFY(QDir().mkpath(tmp.filePath("a")));
    QVERIFY(QFile::copy(QString::fromStdString(m_rope), tmp.filePath("a/run.h5")));
    ui::RunBrowser browser;
    browser.resize(1200, 300);
    browser.show();
    QVERIFY(QTest::qWaitForWindowExposed(&browser));
    browser.setFolders({tmp.path()});
    auto* table = browser.findChild<QTableView*>();
    auto* model = browser.findChild<ui::RunTableModel*>();
    QVERIFY(table && model);
    // The second run lands as a poll finds it, while a filter hides it; the filter cleared, the
    // columns fit it too (the Xvfb walk: widths stayed fitted to the previous filter, "T…s").
    browser.setFilterText(QStringLiteral("pe=rope"));
    test::trainTiny(tmp.filePath("b").toStdString(), "alibi", 3388776655ULL, 12);
    QVERIFY(model->poll());
    QCOMPARE(model->rowCount(), 2);
    QCOMPARE(table->model()->rowCount(), 1);
    browser.setFilterText(QString());
    QCOMPARE(table->model()->rowCount(), 2);
    const auto fits = [&](int c) {
        int widest = 0;
        for (int r = 0; r < table->model()->rowCount(); ++r)
            widest = std::max(widest, table->fontMetrics().horizontalAdvance(
                                          table->model()->index(r, c).data().toString()));
        return table->columnWidth(c) >= std::min(widest, 250);
    };
    const int last = table->horizontalHeader()->logicalIndex(table->model()->columnCount() - 1);
    for (int c = 0; c < table->model()->columnCount(); ++c)
        if (c != last && !table->isColumnHidden(c))
            QVERIFY2(fits(c), qPrintable(table->model()->headerData(c, Qt::Horizontal).toString() +
                                         " is narrower than " +
                                         table->model()->index(1, c).data().toString()));
    table->horizontalHeader()->resizeSection(ui::RunTableModel::Seed, 30);  // the user's
    QVERIFY(QFile::copy(QString::fromStdString(m_alibi), tmp.filePath("c.h5")));
    QVERIFY(QDir().mkpath(tmp.filePath("c")) &&
            QFile::rename(tmp.filePath("c.h5"), tmp.filePath("c/run.h5")));
    QVERIFY(model->poll());
    QCOMPARE(table->columnWidth(ui::RunTableModel::Seed), 30);
}

QTEST_MAIN(TestRunsList)
#include "tst_runs_list.moc"
