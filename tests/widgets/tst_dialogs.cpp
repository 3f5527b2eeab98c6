// The studio asks without nested event loops (issue 56 §3, docs/architecture.md): a file, a
// folder, a number or a yes/no opens with open() (widgets/panels/shared/ask.h) and is answered
// through a callback, so timers and jobs run on while it is up. Before, the export target, Export
// all (a folder picker chained into getInt) and the offer to import the Python code's runs (from a
// signal handler, with a re-entry guard) each spun an event loop of their own; here each of them
// returns at once, shows its dialog, and acts only on the answer.
#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QPointer>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

#include "ask.h"
#include "compare_view.h"
#include "export_dialog.h"
#include "hparams_view.h"
#include "lengen/engine/reference_runs.h"
#include "lengen/engine/sweep.h"
#include "main_window.h"
#include "run_browser.h"
#include "run_controller.h"
#include "setup_panel.h"
#include "studio_test_support.h"
#include "sweep_dialogs.h"
#include "sweeps_view.h"
#include "test_support.h"

using namespace lengen;

namespace {

// The visible dialog of type T named `name` among `parent`'s children (nullptr when none).
template <typename T>
T* shown(QWidget& parent, const QString& name)
{
    for (auto* d : parent.findChildren<T*>(name))
        if (d->isVisible())
            return d;
    return nullptr;
}

template <typename T>
T* waitShown(QWidget& parent, const QString& name)
{
    T* d = nullptr;
    (void)QTest::qWaitFor([&] { return (d = shown<T>(parent, name)) != nullptr; }, 5000);
    return d;
}

QAction* action(QWidget& window, const QString& textStart)
{
    for (auto* a : window.findChildren<QAction*>())
        if (a->text().remove('&').startsWith(textStart))
            return a;
    return nullptr;
}

}  // namespace

class TestDialogs final : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void theWindowFitsTheScreen();
    void initTestCase() { QCoreApplication::setApplicationName("lengen-studio-test-dialogs"); }
    void askReturnsAtOnceAndAnswersLater();
    void exportTargetAsksResolutionForPngOnly();
    void interventionsAreAskedForTheOpenRun();
    void exportAllAsksFolderThenResolution();
    void importOfferDoesNotBlock();
    void newSweepWritesWhereTheRunsListLooks();
    void exportsStartWhereTheLastOneWent();
    void newSweepRemembersItsChoices();
    void longStatusMessagesFitTheBar();
    void runsDockHasRoomAt1280x800();
    void aSavedViewComesBackFromTheMenu();
    void openSweepStartsBesideTheSweepShown();
};

void TestDialogs::askReturnsAtOnceAndAnswersLater()
{
    QWidget parent;
    parent.show();
    QStringList answers;
    ui::ask::folder(&parent, "pick", QDir::tempPath(), [&](const QString& dir) { answers << dir; });
    // Returned already: a static dialog would still be in its own loop here.
    auto* dialog = shown<QFileDialog>(parent, "ask-folder");
    QVERIFY(dialog);
    int ticks = 0;
    QTimer timer;
    connect(&timer, &QTimer::timeout, [&] { ++ticks; });
    timer.start(10);
    QTRY_VERIFY(ticks >= 3);  // the caller's event loop runs while the dialog is up
    QVERIFY(answers.isEmpty());
    dialog->reject();
    QTRY_VERIFY(!shown<QFileDialog>(parent, "ask-folder"));
    QVERIFY2(answers.isEmpty(), "a cancelled dialog answers nothing");

    ui::ask::folder(&parent, "pick", QDir::tempPath(), [&](const QString& dir) { answers << dir; });
    dialog = shown<QFileDialog>(parent, "ask-folder");
    QVERIFY(dialog);
    dialog->selectFile(QDir::tempPath());
    static_cast<QDialog*>(dialog)->accept();  // QFileDialog::accept is protected
    QCOMPARE(answers.size(), 1);
    QCOMPARE(QDir(answers.front()).absolutePath(), QDir(QDir::tempPath()).absolutePath());

    // A number, and a question whose No does nothing.
    int number = 0;
    ui::ask::integer(&parent, "n", "n:", 4, 1, 10, 1, [&](int n) { number = n; });
    auto* input = shown<QInputDialog>(parent, "ask-integer");
    QVERIFY(input);
    input->setIntValue(7);
    input->accept();
    QCOMPARE(number, 7);
    int yes = 0;
    QPointer<QDialog> box = ui::ask::confirm(&parent, "q", "q?", [&] { ++yes; });
    QVERIFY(box && box->isVisible());
    auto* question = qobject_cast<QMessageBox*>(box.data());
    question->button(QMessageBox::No)->click();
    QTRY_VERIFY(!box);  // deleted on close
    QCOMPARE(yes, 0);
    box = ui::ask::confirm(&parent, "q", "q?", [&] { ++yes; });
    qobject_cast<QMessageBox*>(box.data())->button(QMessageBox::Yes)->click();
    QCOMPARE(yes, 1);

    // The asking widget gone first: its dialog goes with it and never answers.
    auto* asker = new QWidget(&parent);
    ui::ask::integer(asker, "n", "n:", 4, 1, 10, 1, [&](int n) { number = n; });
    QPointer<QInputDialog> orphan = shown<QInputDialog>(parent, "ask-integer");
    QVERIFY(orphan);
    delete asker;
    QVERIFY(!orphan);
    QCOMPARE(number, 7);
}

void TestDialogs::exportTargetAsksResolutionForPngOnly()
{
    QWidget parent;
    parent.show();
    QTemporaryDir tmp;
    std::vector<ui::ExportChoice> chosen;
    const auto ask = [&] {
        ui::askExportTarget(&parent, "Export", tmp.filePath("a.png"),
                            [&](const ui::ExportChoice& c) { chosen.push_back(c); });
    };
    ask();
    auto* file = shown<QFileDialog>(parent, "ask-saveFile");
    QVERIFY(file);
    file->selectFile(tmp.filePath("plot.png"));
    static_cast<QDialog*>(file)->accept();  // QFileDialog::accept is protected
    QVERIFY2(chosen.empty(), "a PNG asks for its resolution first");
    auto* dpi = waitShown<QInputDialog>(parent, "ask-integer");
    QVERIFY(dpi);
    dpi->setIntValue(220);
    dpi->accept();
    QCOMPARE(chosen.size(), size_t(1));
    QCOMPARE(chosen[0].path, tmp.filePath("plot.png"));
    QCOMPARE(chosen[0].dpi, 220);

    ask();  // a CSV: no resolution asked
    file = shown<QFileDialog>(parent, "ask-saveFile");
    QVERIFY(file);
    file->selectFile(tmp.filePath("plot.csv"));
    static_cast<QDialog*>(file)->accept();  // QFileDialog::accept is protected
    QCOMPARE(chosen.size(), size_t(2));
    QCOMPARE(chosen[1].path, tmp.filePath("plot.csv"));
    QVERIFY(!shown<QInputDialog>(parent, "ask-integer"));
}

// Issue 82 §5: Analysis ▸ Evaluate with interventions… is InterventionActions' (a class of its
// own): without an open run it says what to do; with one its dialog asks (open(), not exec())
// and an answer queues the evaluation of that run.
void TestDialogs::interventionsAreAskedForTheOpenRun()
{
    const QString runs = QString::fromStdString(test::scratchDir("dialogs-interventions"));
    const QString run = QString::fromStdString(test::trainTiny(runs.toStdString(), "rope"));
    studio::MainWindow w(test::studioOptions(runs));
    w.show();
    QSignalSpy said(&w.interventionActions(), &studio::InterventionActions::statusMessage);
    auto* menu = action(w, "Evaluate with interventions");
    QVERIFY(menu);
    menu->trigger();
    QCOMPARE(said.size(), 1);
    QVERIFY2(said.at(0).at(0).toString().startsWith("Open a run first"),
             qPrintable(said.at(0).at(0).toString()));
    QVERIFY(w.openRun(run));
    menu->trigger();
    auto* dialog = shown<QDialog>(w, "interventionDialog");
    QVERIFY2(dialog, "asked with open(): trigger() returned with it up");
    dialog->reject();
    w.interventionActions().evaluateOpenRunWith({"yarn"}, {"standard"});
    QCOMPARE(w.controller().jobs().size(), qsizetype(1));
    QCOMPARE(w.controller().jobs().front().kind, ui::JobKind::Evaluation);
    w.controller().stop(w.controller().jobs().front().id);
    QVERIFY(test::waitIdle(w.controller(), 120000));
}

void TestDialogs::exportAllAsksFolderThenResolution()
{
    const QString runs = QString::fromStdString(test::scratchDir("dialogs-export-all"));
    const QString run = QString::fromStdString(test::trainTiny(runs.toStdString(), "rope"));
    test::evaluateSmall(run.toStdString(), {"standard"});
    studio::MainWindow w(test::studioOptions(runs));
    w.show();
    QVERIFY(w.openRun(run));
    auto* exportAll = action(w, "Export all figures");
    QVERIFY(exportAll);
    exportAll->trigger();
    auto* folder = shown<QFileDialog>(w, "ask-folder");
    QVERIFY2(folder, "the folder is asked with open(): trigger() returned with it up");
    // Issue 80, defect 7: it offered "figures" inside the run's folder, which did not exist
    // (Choose greyed out); it starts in a folder that exists, the runs folder on a first export.
    QVERIFY2(QFileInfo(folder->directory().absolutePath()).isDir() &&
                 !folder->directory().absolutePath().endsWith("/figures"),
             qPrintable(folder->directory().absolutePath()));
    const QString out = runs + "/figures-here";
    QVERIFY(QDir().mkpath(out));
    folder->selectFile(out);
    static_cast<QDialog*>(folder)->accept();  // QFileDialog::accept is protected
    auto* dpi = waitShown<QInputDialog>(w, "ask-integer");
    QVERIFY(dpi);
    QVERIFY2(w.controller().jobs().isEmpty(), "nothing queued before the resolution is given");
    // Issue 32: the export is a job of the controller (a `lengen export --all` child of the
    // worker) while the event loop turns; it was seconds on the GUI thread.
    int ticks = 0;
    QTimer tick;
    connect(&tick, &QTimer::timeout, [&] { ++ticks; });
    tick.start(20);
    QSignalSpy finished(&w.controller(), &ui::RunController::runFinished);
    dpi->setIntValue(60);
    dpi->accept();
    QCOMPARE(w.controller().jobs().size(), qsizetype(1));
    QCOMPARE(w.controller().jobs().front().kind, ui::JobKind::Export);
    QVERIFY(test::waitIdle(w.controller(), 120000));
    QCOMPARE(finished.count(), 1);
    const auto written = finished.at(0).at(0).value<ui::JobInfo>().result.done;
    QVERIFY2(written >= 4, qPrintable(QString::number(written)));  // loss and evaluation at least
    QVERIFY2(!QDir(out).entryList({"*.png"}, QDir::Files).isEmpty(), qPrintable(out));
    QVERIFY2(ticks > 5, qPrintable(QString::number(ticks)));  // the GUI thread kept turning
    // The Runs list's menu asks the same for several runs and writes each into a folder of its
    // own (issue 72: Export figures was missing from the menu).
    const QString second = QString::fromStdString(test::trainTiny(runs.toStdString(), "nope"));
    w.runJobActions().exportFigures({run, second});
    folder = waitShown<QFileDialog>(w, "ask-folder");
    QVERIFY(folder);
    QCOMPARE(folder->directory().absolutePath(), QFileInfo(out).absoluteFilePath());  // the last
    const QString both = runs + "/figures-both";
    QVERIFY(QDir().mkpath(both));
    folder->selectFile(both);
    static_cast<QDialog*>(folder)->accept();
    dpi = waitShown<QInputDialog>(w, "ask-integer");
    QVERIFY(dpi);
    dpi->setIntValue(60);
    dpi->accept();
    QVERIFY(test::waitIdle(w.controller(), 120000));
    for (const auto& r : {run, second}) {
        const QString into = both + "/" + QFileInfo(r).dir().dirName();
        QVERIFY2(!QDir(into).entryList({"*.png"}, QDir::Files).isEmpty(), qPrintable(into));
    }
}

void TestDialogs::importOfferDoesNotBlock()
{
    QTemporaryDir tmp;
    const std::string trained = test::trainTiny((tmp.path() + "/trained").toStdString(), "alibi");
    const QString models = tmp.path() + "/models";
    engine::exportReferenceRun(
        trained, (models + "/linear_regression/dim_2-3/20250224/ab12cd34").toStdString());
    const QString runs = tmp.path() + "/runs";
    studio::MainWindow w(test::studioOptions(runs));
    w.show();
    auto* browser = w.findChild<ui::RunBrowser*>();
    QVERIFY(browser);
    browser->addFolder(models);  // the browser's signal offers the import
    auto* offer = shown<QMessageBox>(w, "ask-confirm");
    QVERIFY2(offer, "the offer is up, and addFolder returned");
    QVERIFY(w.controller().jobs().isEmpty());
    browser->addFolder(models);  // again while it is up: one offer, not two
    int offers = 0;
    for (auto* box : w.findChildren<QMessageBox*>("ask-confirm"))
        offers += box->isVisible();
    QCOMPARE(offers, 1);
    offer->button(QMessageBox::Yes)->click();
    QCOMPARE(w.controller().jobs().size(), qsizetype(1));
    QCOMPARE(w.controller().jobs().front().kind, ui::JobKind::Import);
    QVERIFY(test::waitIdle(w.controller(), 120000));
    QCOMPARE(w.controller().jobs().front().result.done, std::int64_t(1));
}

// Issue 70, defect 16: the window opened 1280x860 on a 1280x800 screen (status bar off-screen).
void TestDialogs::theWindowFitsTheScreen()
{
    const auto fitted = studio::fitWindowToScreen({1280, 860}, {1280, 800});
    QVERIFY(fitted.height() <= 800 - 40);  // the title bar too
    QVERIFY(fitted.width() <= 1280);
    QCOMPARE(studio::fitWindowToScreen({1000, 700}, {1920, 1080}), QSize(1000, 700));
    QCOMPARE(studio::fitWindowToScreen({1280, 860}, {1920, 1080}), QSize(1280, 860));
}

// Issue 70, defect 3: New sweep proposed ./sweeps/sweep (the current folder), whose runs then
// never appeared in Runs, Compare or Hyperparameters. It proposes a folder under the Runs
// list's, and a sweep created elsewhere is followed by the Runs list.
void TestDialogs::newSweepWritesWhereTheRunsListLooks()
{
    const QString runs = QString::fromStdString(test::scratchDir("dialogs-sweep-runs"));
    studio::MainWindow w(test::studioOptions(runs));
    auto* sweeps = w.findChild<ui::SweepsView*>();
    auto* browser = w.findChild<ui::RunBrowser*>();
    QVERIFY(sweeps && browser);
    QCOMPARE(sweeps->proposedFolder(), QDir(runs).absoluteFilePath("sweeps/sweep"));
    QVERIFY(QDir().mkpath(runs + "/sweeps/sweep/taken"));  // not free: the next one is proposed
    QCOMPARE(sweeps->proposedFolder(), QDir(runs).absoluteFilePath("sweeps/sweep-2"));
    const QString elsewhere =
        QString::fromStdString(test::scratchDir("dialogs-sweep-elsewhere")) + "/S";
    QVERIFY(!ui::folderUnder(elsewhere, browser->folders()));
    QVERIFY(sweeps->createSweep(test::tinySweep(elsewhere.toStdString(), {"rope"}, 1, 20)) != 0);
    QVERIFY(test::waitIdle(w.controller(), 60000));
    QTRY_VERIFY2(ui::folderUnder(elsewhere, browser->folders()),
                 qPrintable(browser->folders().join(", ")));
    QCOMPARE(sweeps->sweep(), elsewhere);  // shown, as before
}

// Issue 70, defect 18: the Export dialogs started in the process's current folder. They start
// in the runs folder, then where the last export went.
void TestDialogs::exportsStartWhereTheLastOneWent()
{
    QSettings().remove(QStringLiteral("export/lastFolder"));
    const QString runs = QString::fromStdString(test::scratchDir("dialogs-export-runs"));
    const QString figures = QString::fromStdString(test::scratchDir("dialogs-export-figures"));
    ui::setExportFallbackFolder(runs);
    QCOMPARE(ui::exportFolder(), runs);
    QWidget parent;
    parent.show();
    QString written;
    ui::askExportTarget(&parent, "Export", "loss.csv",
                        [&](const ui::ExportChoice& c) { written = c.path; });
    auto* file = shown<QFileDialog>(parent, "ask-saveFile");
    QVERIFY(file);
    QCOMPARE(QDir(file->directory()).absolutePath(), QDir(runs).absolutePath());
    file->selectFile(figures + "/loss.csv");
    static_cast<QDialog*>(file)->accept();
    QCOMPARE(written, figures + "/loss.csv");
    QCOMPARE(ui::exportFolder(), figures);  // the next one starts there
    ui::askExportTarget(&parent, "Export", "other.csv", [](const ui::ExportChoice&) {});
    file = shown<QFileDialog>(parent, "ask-saveFile");
    QVERIFY(file);
    QCOMPARE(QDir(file->directory()).absolutePath(), QDir(figures).absolutePath());
    file->reject();
    QSettings().remove(QStringLiteral("export/lastFolder"));
}

// Issue 70, defect 18: New sweep started from the defaults every time.
void TestDialogs::newSweepRemembersItsChoices()
{
    QSettings().remove(QStringLiteral("newSweep"));
    const QString runs = QString::fromStdString(test::scratchDir("dialogs-sweep-choices"));
    studio::MainWindow w(test::studioOptions(runs));
    w.show();
    auto* setup = w.findChild<ui::SetupPanel*>();
    setup->setText(QString::fromStdString(test::tinyConfig()));
    QVERIFY(setup->validate().isEmpty());
    const auto openDialog = [&] {
        setup->findChild<QPushButton*>("newSweep")->click();
        return waitShown<QDialog>(w, "newSweepDialog");
    };
    auto* dialog = openDialog();
    QVERIFY(dialog);
    for (auto* box : dialog->findChildren<QCheckBox*>())
        if (const QString pe = box->objectName(); !pe.isEmpty() && pe != "skipRefused")
            box->setChecked(pe == "alibi");
    dialog->findChild<QSpinBox*>("sweepSeeds")->setValue(2);
    dialog->findChild<QLineEdit*>("sets")->setText("training.max_steps=20");
    dialog->findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok)->click();
    QVERIFY(test::waitIdle(w.controller(), 60000));
    QTRY_VERIFY(!dialog || !dialog->isVisible());
    dialog = openDialog();
    QVERIFY(dialog);
    QVERIFY(dialog->findChild<QCheckBox*>("alibi")->isChecked());
    QVERIFY(!dialog->findChild<QCheckBox*>("rope")->isChecked());
    QCOMPARE(dialog->findChild<QSpinBox*>("sweepSeeds")->value(), 2);
    QCOMPARE(dialog->findChild<QLineEdit*>("sets")->text(), QString("training.max_steps=20"));
    QVERIFY(dialog->findChild<QLineEdit*>("folder")->text().endsWith("sweeps/sweep-2"));
    dialog->reject();
    QSettings().remove(QStringLiteral("newSweep"));
}

// Issue 70, defect 18: a long status message was cut at the window's edge. It is shortened
// in the middle to fit, and whole in the bar's tooltip.
void TestDialogs::longStatusMessagesFitTheBar()
{
    const QString runs = QString::fromStdString(test::scratchDir("dialogs-status"));
    studio::MainWindow w(test::studioOptions(runs));
    w.resize(1280, 760);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    const QString message = "Not trained: " + QString(60, 'x') + " " +
                            QStringList(QList<QString>(30, QStringLiteral("word"))).join(' ') +
                            " the end";
    w.statusBar()->showMessage(message, 5000);
    const QString shown = w.statusBar()->currentMessage();
    QVERIFY2(w.statusBar()->fontMetrics().horizontalAdvance(shown) < w.statusBar()->width(),
             qPrintable(shown));
    QVERIFY(shown.startsWith("Not trained") && shown.endsWith("the end") && shown.contains("…"));
    QCOMPARE(w.statusBar()->toolTip(), message);
    w.statusBar()->showMessage("Ready");
    QCOMPARE(w.statusBar()->currentMessage(), QString("Ready"));
}

// Issue 70, defect 16: at 1280 x 800 the Runs dock showed 3-4 rows: the tallest tab's
// minimum (Attention's plots, Hyperparameters' plot and table) bounded it. Those scroll now.
void TestDialogs::runsDockHasRoomAt1280x800()
{
    QSettings().remove(QStringLiteral("window"));  // a first start: the dock's default height
    const QString runs = QString::fromStdString(test::scratchDir("dialogs-dock"));
    studio::MainWindow w(test::studioOptions(runs));
    w.resize(1264, 752);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    auto* dock = w.findChild<QDockWidget*>(QStringLiteral("runs"));
    QVERIFY(dock);
    QTRY_VERIFY2(dock->height() >= 240, qPrintable(QString::number(dock->height())));  // 155 before
    // And it can be made tall: dragged up, it takes the room down to the tabs' bar and one
    // readable line of the page (the Xvfb pass, N8: it grew by 48 px). Each tab's page scrolls
    // below its minimum instead of bounding it.
    QStringList tall;
    for (int i = 0; i < w.tabs()->count(); ++i)
        if (w.tabs()->widget(i)->minimumSizeHint().height() > 200)
            tall << QStringLiteral("%1 (%2 px)")
                        .arg(w.tabs()->tabText(i))
                        .arg(w.tabs()->widget(i)->minimumSizeHint().height());
    w.resizeDocks({dock}, {520}, Qt::Vertical);
    QTRY_VERIFY2(dock->height() >= 480,
                 qPrintable(QString::number(dock->height()) + "; tall pages: " + tall.join(", ")));
}

// Issue 72, item 4: the View menu's Saved views saves the Runs filter and columns, Compare's
// choices and the Hyperparameters axes under a name (shared: in the runs folder), and its entry
// puts them all back.
void TestDialogs::aSavedViewComesBackFromTheMenu()
{
    QSettings().remove(QStringLiteral("savedViews"));
    const QString runs = QString::fromStdString(test::scratchDir("dialogs-views"));
    const QString run = QString::fromStdString(test::trainTiny(runs.toStdString(), "rope", 1, 10));
    studio::MainWindow w(test::studioOptions(runs));
    w.show();
    w.compareRuns({run});  // the comparison the view keeps
    auto* browser = w.runBrowser();
    browser->setFilterText("pe=rope long");
    browser->setHiddenColumnNames({"backbone", "notes"});
    browser->setExtraColumns({"min_loss"});
    ui::CompareChoices chosen;
    chosen.method = "training: grad norm";
    chosen.group = ui::CompareGroup::Keys;
    chosen.keys = "pe";
    chosen.smoothing = 0.5;
    chosen.x = ui::LoggedX::Relative;
    chosen.legendOutside = false;
    w.compareView()->setChoices(chosen);
    w.hparamsView()->setChoice({{"pe", "final_loss"}, "pe", {{"final_loss", 0.1, 0.9, "", ""}}});
    auto* menu = w.findChild<QMenu*>("savedViewsMenu");
    QVERIFY(menu);
    Q_EMIT menu->aboutToShow();
    action(w, "Save current view")->trigger();
    auto* dialog = waitShown<QDialog>(w, "ask-saveView");
    QVERIFY(dialog);
    dialog->findChild<QComboBox*>("viewName")->setCurrentText("rope, long");
    dialog->findChild<QCheckBox*>("shareView")->setChecked(true);
    dialog->findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Save)->click();
    QVERIFY(QFile::exists(runs + "/lengen-views.json"));
    // Everything changed since; the menu's entry puts it back.
    browser->setFilterText("");
    browser->setHiddenColumnNames({});
    browser->setExtraColumns({});
    w.compareView()->setRuns({});
    w.compareView()->setChoices({});
    w.hparamsView()->setChoice({{"final_loss"}, "", {}});
    Q_EMIT menu->aboutToShow();
    QAction* entry = action(w, "rope, long (shared)");
    QVERIFY(entry);
    entry->trigger();
    QCOMPARE(browser->filterText(), QStringLiteral("pe=rope long"));
    QCOMPARE(browser->hiddenColumnNames(), (QStringList{"backbone", "notes"}));
    QCOMPARE(browser->extraColumns(), QStringList{"min_loss"});
    QCOMPARE(w.compareView()->runs(), QStringList{QFileInfo(run).absoluteFilePath()});
    const auto& c = w.compareView()->model().choices();
    QCOMPARE(c.method, chosen.method);  // a logged column: offered for any run
    QCOMPARE(int(c.group), int(ui::CompareGroup::Keys));
    QCOMPARE(c.keys, QStringLiteral("pe"));
    QCOMPARE(c.smoothing, 0.5);
    QCOMPARE(int(c.x), int(ui::LoggedX::Relative));
    QVERIFY(!c.legendOutside);
    const auto& h = w.hparamsView()->choices().kept();
    QCOMPARE(h.axes, (std::vector<std::string>{"pe", "final_loss"}));
    QCOMPARE(h.color, std::string("pe"));
    QCOMPARE(h.brushes.size(), size_t(1));
    QVERIFY2(w.statusBar()->currentMessage().contains("applied"),
             qPrintable(w.statusBar()->currentMessage()));
    // Issue 80, defect 8: deleting a shared view empties it for everyone who follows the
    // folder: asked first, naming that it is shared; No keeps it.
    Q_EMIT menu->aboutToShow();
    QAction* del = action(w, "Delete “rope, long” (shared)");
    QVERIFY(del);
    del->trigger();
    auto* ask = waitShown<QMessageBox>(w, "ask-confirm");
    QVERIFY(ask);
    QVERIFY2(ask->text().contains("shared") && ask->text().contains("lengen-views.json"),
             qPrintable(ask->text()));
    ask->button(QMessageBox::No)->click();
    QVERIFY(w.savedViews().view("rope, long").has_value());
    Q_EMIT menu->aboutToShow();
    action(w, "Delete “rope, long” (shared)")->trigger();
    ask = waitShown<QMessageBox>(w, "ask-confirm");
    QVERIFY(ask);
    ask->button(QMessageBox::Yes)->click();
    QTRY_VERIFY(!w.savedViews().view("rope, long").has_value());
    browser->setFilterText("");
    browser->setHiddenColumnNames({"backbone", "created"});
    browser->setExtraColumns({});
    QSettings().remove(QStringLiteral("savedViews"));
}

// Issue 80, defect 27: Open sweep… started inside the sweep shown, where no other sweep is; it
// starts beside it.
void TestDialogs::openSweepStartsBesideTheSweepShown()
{
    const std::string parent = test::scratchDir("dialogs-open-sweep");
    const std::string S = parent + "/S";
    test::writeFile(S, "base.yaml", test::tinyConfig());
    test::writeFile(S, "sweep.yaml", "base: base.yaml\naxes:\n  pe: [rope]\n");
    engine::prepareSweep(S);
    studio::MainWindow w(test::studioOptions(QString::fromStdString(parent)));
    w.show();
    auto* sweeps = w.findChild<ui::SweepsView*>();
    QVERIFY(sweeps->setSweep(QString::fromStdString(S)));
    QPushButton* open = nullptr;
    for (auto* b : sweeps->findChildren<QPushButton*>())
        if (b->text() == "Open sweep…")
            open = b;
    QVERIFY(open);
    open->click();
    auto* dialog = waitShown<QFileDialog>(w, "ask-folder");
    QVERIFY(dialog);
    QCOMPARE(dialog->directory().absolutePath(),
             QFileInfo(QString::fromStdString(parent)).canonicalFilePath());
    dialog->reject();
}

QTEST_MAIN(TestDialogs)
#include "tst_dialogs.moc"
