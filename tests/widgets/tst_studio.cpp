// The real studio window offscreen, after real sequences (issue 29): one open run that every
// tab, the title and Analysis follow, also after training a run from the studio; damaged files
// refused without changing the open run; the Train tab showing the open run and only it, with
// Resume for a stopped run; Pause/Stop belonging to training; the wheel leaving unfocused fields
// alone; refused YAML values shown as not applied; the Runs list following new runs; jobs
// (issue 39): the Train tab acting on the open run's training only, the Jobs panel on any job,
// "paused" everywhere, and a sweep starting while an evaluation runs.

#include <QApplication>
#include <QCheckBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTest>
#include <QThread>
#include <QTimer>
#include <QWheelEvent>

#include <filesystem>
#include <fstream>

#include "analysis_jobs.h"
#include "attention_view.h"
#include "figure_view.h"
#include "jobs_panel.h"
#include "lengen/engine/run_archive.h"
#include "lengen/engine/run_control.h"
#include "lengen/engine/run_file.h"
#include "lengen/engine/sweep.h"
#include "lengen/engine/sweep_run.h"
#include "lengen/engine/trainer.h"
#include "main_window.h"
#include "qcp.h"
#include "run_browser.h"
#include "run_form.h"
#include "run_table_model.h"
#include "setup_panel.h"
#include "studio_test_support.h"
#include "sweeps_view.h"
#include "test_support.h"
#include "training_view.h"

using namespace lengen;
namespace fs = std::filesystem;

namespace {

struct Quiet final : engine::TrainObserver {};

// A tiny run trained here; `cancelFirst`: stopped before its first step (no log, resumable).
QString trainTiny(const std::string& out, std::uint64_t seed, bool cancelFirst = false)
{
    auto config = test::loadOne(test::tinyConfig());
    engine::TrainOptions o;
    o.outDir = out;
    o.seed = seed;
    o.device = "cpu";
    o.threads = 1;
    engine::RunControl control;
    if (cancelFirst)
        control.requestCancel();
    Quiet quiet;
    return QString::fromStdString(engine::train(config, o, control, quiet).runFile);
}

using test::waitIdle;

QMessageBox* problemBox(QWidget& window)
{
    for (auto* box : window.findChildren<QMessageBox*>(QStringLiteral("problem")))
        if (box->isVisible())
            return box;
    return nullptr;
}

void closeProblems(QWidget& window)
{
    for (auto* box : window.findChildren<QMessageBox*>(QStringLiteral("problem")))
        box->close();
    QCoreApplication::processEvents();
}

QPushButton* button(QWidget* in, const QString& text)
{
    for (auto* b : in->findChildren<QPushButton*>())
        if (b->text() == text)
            return b;
    return nullptr;
}

}  // namespace

class TestStudio final : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void oneOpenRunAcrossTheWindow();
    void damagedFilesAreRefused();
    void trainTabShowsTheOpenRunAndOffersResume();
    void wheelLeavesUnfocusedFieldsAlone();
    void refusedValuesShowAsNotApplied();
    void runsListFollowsNewRuns();
    void runsListShowsStepsAsTheyLand();
    void trainTabActsOnTheOpenRunOnly();
    void aSweepStartsWhileAnEvaluationRuns();
    void hoverReadOutsFollowTheOpenRun();
    void longLabelsNeverWidenTheWindow();
    void aDeletedOpenRunCloses();
    void theOpenRunsSwatchFitsItsTaskCell();

private:
    studio::StudioOptions options() const { return test::studioOptions(m_runs); }
    QString m_runs, m_a, m_stopped;
};

void TestStudio::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);  // QSettings of its own, not the user's
    QCoreApplication::setOrganizationName(QStringLiteral("lengen-tests"));
    // The New sweep dialog's remembered choices: each run of the tests starts from its defaults.
    QSettings().remove(QStringLiteral("newSweep"));
    m_runs = QString::fromStdString(test::scratchDir("studio-runs"));
    m_a = trainTiny(m_runs.toStdString(), 1);
    m_stopped = trainTiny(m_runs.toStdString(), 2, true);
}

// Defect 2: open A, train B from Set up: every tab, the title and Analysis act on B.
void TestStudio::oneOpenRunAcrossTheWindow()
{
    studio::MainWindow w(options());
    QVERIFY(w.openRun(m_a));
    const QString a = w.openRunFile();
    QVERIFY(w.windowTitle().contains(a));

    auto* setup = w.findChild<ui::SetupPanel*>();
    setup->setText(QString::fromStdString(test::tinyConfig("linear_regression", "rope", 40)));
    setup->setOutputFolder(m_runs);
    auto request = setup->request();
    QVERIFY(request.has_value());
    QSignalSpy finished(&w.controller(), &ui::RunController::runFinished);
    w.train(*request);
    QVERIFY(waitIdle(w.controller()));
    QCOMPARE(finished.count(), 1);
    const QString b = QString::fromStdString(finished.at(0).at(0).value<ui::JobInfo>().subject);
    QCoreApplication::processEvents();

    const QString open = w.openRunFile();
    QVERIFY2(open != a && QFileInfo(open) == QFileInfo(b), qPrintable(open));
    QVERIFY2(w.windowTitle().contains(open), qPrintable(w.windowTitle()));
    QCOMPARE(w.trainingView()->shownRun(), open);
    QCOMPARE(w.evaluationView()->run(), open);
    QCOMPARE(w.probesView()->run(), open);
    QCOMPARE(w.attentionView()->run(), open);
    QCOMPARE(w.trainingView()->progressText(), QString("40/40"));

    // Analysis ▸ Evaluate acts on the run shown; the Train tab's Pause/Stop are not its controls.
    w.runJobActions().evaluateOpenRun();
    QVERIFY(QTest::qWaitFor(
        [&] {
            return w.controller().state() == ui::RunController::State::Running &&
                   w.controller().focus()->kind == ui::JobKind::Evaluation;
        },
        20000));
    QVERIFY2(QString::fromStdString(w.controller().focus()->label)
                 .contains(QFileInfo(open).dir().dirName()),
             w.controller().focus()->label.c_str());
    QVERIFY(!button(w.trainingView(), "Pause")->isEnabled());
    QVERIFY(!button(w.trainingView(), "Stop")->isEnabled());
    w.controller().stop();
    QVERIFY(waitIdle(w.controller()));
    QCOMPARE(w.openRunFile(), open);
}

// Defect 4: a damaged file or a text file named run.h5 is refused with the CLI's message; the
// open run, the title and the views stay. An empty folder given to --open says it holds no runs.
void TestStudio::damagedFilesAreRefused()
{
    studio::MainWindow w(options());
    QVERIFY(w.openRun(m_a));
    const QString a = w.openRunFile(), title = w.windowTitle();
    const auto dir = test::scratchDir("studio-damaged");
    const auto text = test::writeFile(dir + "/text", "run.h5", "model:\n  family: Llama2\n");
    fs::create_directories(dir + "/cut");
    fs::copy_file(a.toStdString(), dir + "/cut/run.h5");
    fs::resize_file(dir + "/cut/run.h5", fs::file_size(dir + "/cut/run.h5") / 2);
    for (const auto& bad : {dir + "/text", dir + "/cut/run.h5"}) {
        QVERIFY(!w.openRun(QString::fromStdString(bad)));
        QCOMPARE(w.openRunFile(), a);
        QCOMPARE(w.windowTitle(), title);
        QCOMPARE(w.evaluationView()->run(), a);
        QCOMPARE(w.trainingView()->shownRun(), a);
        auto* box = problemBox(w);
        QVERIFY(box);
        QVERIFY2(box->text().contains("run.h5") && box->text().contains("unchanged"),
                 qPrintable(box->text()));
        closeProblems(w);
    }

    auto o = options();
    o.openRun = QString::fromStdString(test::scratchDir("studio-empty"));
    studio::MainWindow empty(o);
    QVERIFY(QTest::qWaitFor([&] { return problemBox(empty) != nullptr; }, 5000));
    QVERIFY2(problemBox(empty)->text().contains("holds no runs"),
             qPrintable(problemBox(empty)->text()));
    QVERIFY(empty.openRunFile().isEmpty());
}

// Defect 3 and Resume: after a finished run, a stopped run without a log shows its own
// progress and no plot of the other; Resume continues it to the end.
void TestStudio::trainTabShowsTheOpenRunAndOffersResume()
{
    studio::MainWindow w(options());
    QVERIFY(w.openRun(m_a));
    auto* view = w.trainingView();
    QCOMPARE(view->progressText(), QString("20/20"));
    QVERIFY(view->loggedPoints() > 0);
    QVERIFY(!view->resumeOffered());

    QVERIFY(w.openRun(m_stopped));
    QCOMPARE(view->progressText(), QString("0/20"));
    QCOMPARE(view->loggedPoints(), 0);
    QVERIFY(view->rateText().isEmpty());
    QVERIFY(view->resumeOffered());
    QCOMPARE(ui::RunTableModel::readRow(m_stopped).status, QString("cancelled"));
    QCOMPARE(ui::statusLabel("cancelled"), QString("stopped"));

    QSignalSpy finished(&w.controller(), &ui::RunController::runFinished);
    button(view, "Resume training")->click();
    QVERIFY(waitIdle(w.controller()));
    QCOMPARE(finished.count(), 1);
    QCoreApplication::processEvents();
    QCOMPARE(view->progressText(), QString("20/20"));
    QVERIFY(!view->resumeOffered());
    QCOMPARE(ui::RunTableModel::readRow(m_stopped).status, QString("finished"));
}

// Defect 5: scrolling over the Set up form does not change the PE or the layer count.
void TestStudio::wheelLeavesUnfocusedFieldsAlone()
{
    studio::MainWindow w(options());
    auto* setup = w.findChild<ui::SetupPanel*>();
    QVERIFY(setup->loadFile(
        QString::fromStdString(test::sourcePath("configs/quick/linear_regression_yarn.yaml"))));
    w.show();
    for (const char* key : {"patch.rope_scaling.type", "model.num_hidden_layers"}) {
        auto* field = setup->form()->fieldFor(key);
        QVERIFY(field && !field->hasFocus());
        const QString before = field->property("currentText").isValid()
                                   ? field->property("currentText").toString()
                                   : field->property("text").toString();
        const QPointF at(field->width() / 2.0, field->height() / 2.0);
        QWheelEvent wheel(at, field->mapToGlobal(at), QPoint(), QPoint(0, -120), Qt::NoButton,
                          Qt::NoModifier, Qt::NoScrollPhase, false);
        QApplication::sendEvent(field, &wheel);
        const QString after = field->property("currentText").isValid()
                                  ? field->property("currentText").toString()
                                  : field->property("text").toString();
        QCOMPARE(after, before);
    }
}

// Defect 7: a refused value is not shown as the last valid one.
void TestStudio::refusedValuesShowAsNotApplied()
{
    studio::MainWindow w(options());
    auto* setup = w.findChild<ui::SetupPanel*>();
    const QString good = QString::fromStdString(test::tinyConfig());
    setup->setText(good);
    QVERIFY(setup->validate().isEmpty());
    QVERIFY(!setup->form()->showsNotApplied("model.num_attention_heads"));
    setup->setText(QString(good).replace("num_attention_heads: 2", "num_attention_heads: 3"));
    QVERIFY(!setup->validate().isEmpty());
    QVERIFY(setup->form()->showsNotApplied("model.num_attention_heads"));
    auto* heads = setup->form()->fieldFor("model.num_attention_heads");
    QVERIFY2(heads->property("text").toString().contains("3"),
             qPrintable(heads->property("text").toString()));
    setup->setText(good);
    QVERIFY(setup->validate().isEmpty());
    QVERIFY(!setup->form()->showsNotApplied("model.num_attention_heads"));
    QCOMPARE(heads->property("value").toInt(), 2);
}

// Defect 8: a run written into a watched folder, also a folder made after the studio started,
// is listed without Refresh.
void TestStudio::runsListFollowsNewRuns()
{
    ui::RunBrowser browser;
    const QString root = QString::fromStdString(test::scratchDir("studio-follow"));
    browser.setFolders({root});
    QCOMPARE(browser.model()->rowCount(), 0);
    const QString fresh = trainTiny((root + "/made-later").toStdString(), 5);
    QVERIFY(browser.model()->poll());
    QVERIFY(browser.model()->rowOfPath(fresh) >= 0);
    QVERIFY(!browser.model()->poll());  // nothing changed since
}

// Defect 8: a run trained from the studio read "0 / 3000 · running" until its first checkpoint.
void TestStudio::runsListShowsStepsAsTheyLand()
{
    studio::MainWindow w(options());
    const QString root = QString::fromStdString(test::scratchDir("studio-landing"));
    auto* setup = w.findChild<ui::SetupPanel*>();
    // No checkpoint before the end: only the log says how far it is.
    setup->setText(QString::fromStdString(test::tinyConfig("linear_regression", "rope", 20000))
                       .replace("save_steps: 10", "save_steps: 100000"));
    setup->setOutputFolder(root);
    w.runBrowser()->setFolders({root});
    auto request = setup->request();
    QVERIFY(request.has_value());
    w.train(*request);
    QVERIFY(QTest::qWaitFor([&] { return !w.openRunFile().isEmpty(); }, 20000));
    const QString run = w.openRunFile();
    QVERIFY(QTest::qWaitFor(
        [&] {
            try {
                return engine::readRunInfo(run.toStdString()).lastLoggedStep >= 50;
            } catch (const std::exception&) {
                return false;
            }
        },
        60000));
    w.runBrowser()->model()->poll();
    const int row = w.runBrowser()->model()->rowOfPath(run);
    QVERIFY(row >= 0);
    const auto& r = w.runBrowser()->model()->row(row);
    QCOMPARE(r.status, QString("running"));
    QVERIFY2(r.steps >= 50, qPrintable(QString::number(r.steps)));
    w.controller().stop();
    QVERIFY(waitIdle(w.controller()));
}

// Issue 39: train A from the studio, then open finished run B. The Train tab's Pause and Stop
// can't touch A (they paused a hidden training once) and it offers to open A; the Jobs panel
// pauses A, and the Runs list says "paused" like the panel; Continue and Stop there end it.
void TestStudio::trainTabActsOnTheOpenRunOnly()
{
    studio::MainWindow w(options());
    const QString root = QString::fromStdString(test::scratchDir("studio-two-runs"));
    auto* setup = w.findChild<ui::SetupPanel*>();
    setup->setText(QString::fromStdString(test::tinyConfig("linear_regression", "rope", 2000000)));
    setup->setOutputFolder(root);
    w.runBrowser()->setFolders({root, m_runs});
    auto request = setup->request();
    QVERIFY(request.has_value());
    w.train(*request);
    QVERIFY(QTest::qWaitFor([&] { return !w.openRunFile().isEmpty(); }, 20000));
    const QString a = w.openRunFile();
    auto* view = w.trainingView();
    QVERIFY(
        QTest::qWaitFor([&] { return view->controlsEnabled(); }, 5000));  // A is open: its controls

    QVERIFY(w.openRun(m_a));  // B, finished
    QVERIFY(!view->controlsEnabled());
    QVERIFY2(view->otherTrainingOffer().contains("is running — open it"),
             qPrintable(view->otherTrainingOffer()));
    const auto trainId = w.controller().focusJob();
    QCOMPARE(QString::fromStdString(w.controller().job(trainId)->subject),
             QFileInfo(a).absoluteFilePath());

    auto* jobs = w.jobsPanel();
    jobs->select(trainId);
    QVERIFY(jobs->actionEnabled(ui::JobsPanel::Action::Pause));
    QVERIFY(!jobs->actionEnabled(ui::JobsPanel::Action::Cancel));
    jobs->trigger(ui::JobsPanel::Action::Pause);
    QCOMPARE(w.controller().job(trainId)->state, ui::JobState::Paused);
    QVERIFY2(view->otherTrainingOffer().contains("is paused"),
             qPrintable(view->otherTrainingOffer()));
    QVERIFY(jobs->rowTexts().join("\n").contains(" | paused | "));
    w.runBrowser()->model()->poll();
    const int row = w.runBrowser()->model()->rowOfPath(a);
    QVERIFY(row >= 0);
    const auto status =
        w.runBrowser()
            ->model()
            ->data(w.runBrowser()->model()->index(row, ui::RunTableModel::Status), Qt::DisplayRole)
            .toString();
    QCOMPARE(status, QString("paused"));
    QVERIFY(w.openRunFile() == QFileInfo(m_a).absoluteFilePath() ||
            w.openRunFile() == m_a);  // nothing reopened A

    jobs->trigger(ui::JobsPanel::Action::Continue);
    QCOMPARE(w.controller().job(trainId)->state, ui::JobState::Running);
    QVERIFY(jobs->actionEnabled(ui::JobsPanel::Action::OpenRun));
    jobs->trigger(ui::JobsPanel::Action::OpenRun);
    QCOMPARE(QFileInfo(w.openRunFile()), QFileInfo(a));
    QVERIFY(view->controlsEnabled());  // A open again: the Train tab steers it
    w.openRun(m_a);
    jobs->select(trainId);
    jobs->trigger(ui::JobsPanel::Action::Stop);
    QVERIFY(waitIdle(w.controller()));
    QCOMPARE(w.controller().job(trainId)->state, ui::JobState::Cancelled);
    QCOMPARE(engine::readRunInfo(a.toStdString()).status, std::string("cancelled"));
    // Issue 52: the Jobs panel's row and the Runs list say "last logged", not "final".
    const QString said = QString::fromStdString(w.controller().job(trainId)->message);
    QVERIFY2(said.startsWith("stopped after ") && said.contains("last logged loss"),
             qPrintable(said));
    w.runBrowser()->refresh();
    const auto* model = w.runBrowser()->model();
    const auto loss =
        model->index(model->rowOfPath(a), ui::RunTableModel::FinalLoss).data().toString();
    QVERIFY2(loss.startsWith("last logged "), qPrintable(loss));
    // Issue 41, words: "final loss" only for a run that finished.
    QVERIFY(w.openRun(a));
    QVERIFY2(view->headerText().contains("last logged loss") &&
                 !view->headerText().contains("final loss"),
             qPrintable(view->headerText()));
    QVERIFY(w.openRun(m_a));
    QVERIFY2(view->headerText().contains("final loss"), qPrintable(view->headerText()));
}

// Issue 39: an evaluation with an intervention runs; a sweep created and run meanwhile starts
// its cells while the evaluation still runs (it once waited minutes behind it, with Stop
// disabled and nothing said).
void TestStudio::aSweepStartsWhileAnEvaluationRuns()
{
    studio::MainWindow w(options());
    const QString dir = QString::fromStdString(test::scratchDir("studio-sweep-beside-eval"));
    engine::EvalOptions o;
    o.methods = {"ood_length"};
    o.prompts = 4096;
    o.oodFactor = 8;
    o.interventions = {"yarn"};
    o.common.threads = 1;
    const quint64 eval = w.controller().enqueue(ui::JobKind::Evaluation, "evaluate A with yarn",
                                                studio::evalJob(m_a, o, {}), ui::runSubject(m_a));
    QCOMPARE(w.controller().job(eval)->state, ui::JobState::Running);

    engine::createSweep(test::tinySweep(dir.toStdString() + "/S", {"rope"}, 1, 2000000));
    auto* sweeps = w.findChild<ui::SweepsView*>();
    QVERIFY(sweeps->setSweep(dir + "/S"));
    sweeps->runHere();
    const engine::SweepPaths paths{dir.toStdString() + "/S"};
    bool cellRuns = false;
    QVERIFY(QTest::qWaitFor(
        [&] {
            cellRuns = QFileInfo::exists(QString::fromStdString(paths.runFile("000-rope-s1")));
            return cellRuns || !w.controller().job(eval)->active();
        },
        60000));
    QVERIFY2(cellRuns && w.controller().job(eval)->active(),
             "the cell started while the evaluation ran");
    const auto jobs = w.controller().jobs();
    QVERIFY(std::count_if(jobs.begin(), jobs.end(),
                          [](const ui::JobInfo& j) { return j.active(); }) == 2);
    sweeps->stopRun();
    w.controller().stop(eval);
    QVERIFY(waitIdle(w.controller(), 120000));
}

// Issue 41, defect 3: a hover read-out belongs to what is drawn. Open A and hover its loss
// plot; open the stopped run (no log): the Train tab's read-out is gone, and the Evaluation tab's
// is its hint, not the previous run's values.
void TestStudio::hoverReadOutsFollowTheOpenRun()
{
    studio::MainWindow w(options());
    w.resize(1280, 860);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.openRun(m_a));
    w.findChild<QTabWidget*>()->setCurrentWidget(w.trainingView());
    QCoreApplication::processEvents();
    auto* view = w.trainingView();
    // Move over each plot of the Train tab until one reads out values (the loss plot does).
    for (auto* plot : view->findChildren<QCustomPlot*>()) {
        plot->replot(QCustomPlot::rpImmediateRefresh);
        QTest::mouseMove(plot, plot->rect().center());
        QCoreApplication::processEvents();
        if (!view->hoverText().isEmpty())
            break;
    }
    QVERIFY2(view->hoverText().contains("loss"), qPrintable(view->hoverText()));
    QVERIFY(w.openRun(m_stopped));
    QCOMPARE(view->hoverText(), QString());
    QVERIFY(w.evaluationView()->hoverText().startsWith("Hover for values"));
}

// Issue 41, defect 4: a training and three queued ones with long labels. The Train tab's queue
// line is elided (the whole text in its tooltip), the window keeps its width, and Stop stays
// inside it.
void TestStudio::longLabelsNeverWidenTheWindow()
{
    studio::MainWindow w(options());
    w.resize(1280, 860);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    w.findChild<QTabWidget*>()->setCurrentWidget(w.trainingView());
    const int width = w.width();
    auto waiting = [](engine::RunControl& control, engine::TrainObserver& obs) {
        engine::RunStarted s;
        s.totalSteps = 100;
        obs.onStarted(s);
        while (control.shouldContinue())
            QThread::msleep(5);
        engine::RunSummary r;
        r.outcome = engine::RunOutcome::Cancelled;
        return r;
    };
    const QString longLabel =
        QString("linear_regression · RoPE with a very long descriptive label ").repeated(3);
    for (int i = 0; i < 4; ++i)
        w.controller().enqueue(longLabel + QString::number(i), waiting,
                               ui::newRunSubject(QString::number(i)));
    QTest::qWait(200);
    QCOMPARE(w.controller().queuedCount(), 3);
    QCOMPARE(w.width(), width);
    QVERIFY2(w.minimumSizeHint().width() <= width,
             qPrintable(QString::number(w.minimumSizeHint().width())));
    auto* stop = button(w.trainingView(), "Stop");
    QVERIFY(stop);
    const QRect inWindow(stop->mapTo(&w, QPoint(0, 0)), stop->size());
    QVERIFY2(w.rect().contains(inWindow), "Stop is inside the window");
    w.controller().clearQueue();
    w.controller().stop();
    QVERIFY(waitIdle(w.controller()));
}

// Issue 80 §1, defect 4: a deleted open run stayed open with Resume enabled, and Resume then
// failed with "run file not found". The open run follows its file: moved to the trash (here by
// the CLI's engine call, as another process would; the Runs list's Delete closes it at once),
// it closes at the next look, says so, and offers no Resume.
void TestStudio::aDeletedOpenRunCloses()
{
    studio::MainWindow w(options());
    const auto* loss = w.trainingView()->findChild<QCustomPlot*>(QStringLiteral("lossPlot"));
    QVERIFY(loss && !loss->legend->visible());  // nothing drawn yet: it listed "loss, EMA"
    const QString stopped = trainTiny(m_runs.toStdString(), 31, true);  // resumable
    QVERIFY(w.openRun(stopped));
    QVERIFY(w.trainingView()->resumeOffered());
    const auto moved = engine::carryOutRemoval(
        engine::planRunRemoval({stopped.toStdString()}, engine::RunRemoval::Trash));
    QVERIFY(w.openRunModel().isOpen());
    QVERIFY(!w.openRunModel().checkStillThere());  // what its 3 s watch asks
    QVERIFY(!w.openRunModel().isOpen());
    QVERIFY(!w.windowTitle().contains(stopped));
    QVERIFY2(w.statusBar()->currentMessage().contains("is no longer there"),
             qPrintable(w.statusBar()->currentMessage()));
    QVERIFY(!w.trainingView()->resumeOffered());
    QVERIFY2(w.trainingView()->headerText().startsWith("No run open"),  // not "run file not found:"
             qPrintable(w.trainingView()->headerText()));
    // No curve, so no legend: an empty one was a white box in the corner (the Xvfb pass, N5).
    QVERIFY(!loss->legend->visible());
    engine::restoreRuns(
        QFileInfo(QString::fromStdString(moved.front().to)).absolutePath().toStdString());
}

// The Xvfb pass: the open run's Task cell read "linea…ssion": the Train tab drew it in its
// colour, its swatch came, and the column kept the width measured without it.
void TestStudio::theOpenRunsSwatchFitsItsTaskCell()
{
    const QString run = trainTiny(m_runs.toStdString(), 41);
    studio::MainWindow w(options());
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    auto* table = w.runBrowser()->findChild<QTableView*>();
    QVERIFY(table);
    QTRY_VERIFY(table->model()->rowCount() > 0);
    QVERIFY(w.openRun(run));
    const int task = ui::RunTableModel::Task;
    const auto swatchShown = [&] {
        for (int r = 0; r < table->model()->rowCount(); ++r)
            if (table->model()->index(r, task).data(Qt::DecorationRole).isValid())
                return true;
        return false;
    };
    QTRY_VERIFY(swatchShown());  // the open run's, drawn by the Train tab
    const auto* view = static_cast<const QAbstractItemView*>(table);  // its hint is public
    QTRY_VERIFY2(table->columnWidth(task) >= view->sizeHintForColumn(task),
                 qPrintable(QStringLiteral("%1 < %2")
                                .arg(table->columnWidth(task))
                                .arg(view->sizeHintForColumn(task))));
}

QTEST_MAIN(TestStudio)
#include "tst_studio.moc"
