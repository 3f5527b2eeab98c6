// Jobs across processes and the studio's job dialogs (issues 52, 53), in the real window or the
// Jobs panel offscreen: a training a terminal started is found, named by its holder and stopped
// from the panel; the New sweep dialog keeps its choices until the job that creates the sweep
// answers.

#include <QCheckBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTest>

#include <algorithm>

#include "jobs_panel.h"
#include "lengen/engine/run_file.h"
#include "lengen/engine/sweep.h"
#include "main_window.h"
#include "run_controller.h"
#include "setup_panel.h"
#include "studio_test_support.h"
#include "test_support.h"
#include "training_view.h"

using namespace lengen;

namespace {
using test::waitIdle;
}  // namespace

class TestStudioJobs final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void jobsPanelStopsAnotherProcessesTraining();
    void newSweepDialogKeepsItsChoicesAfterARefusal();

private:
    studio::StudioOptions options() const { return test::studioOptions(m_runs); }
    QString m_runs;
};

void TestStudioJobs::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);  // QSettings of its own, not the user's
    QCoreApplication::setOrganizationName(QStringLiteral("lengen-tests"));
    m_runs = QString::fromStdString(test::scratchDir("studio-jobs-runs"));
}

// Issue 53: a training a terminal started appears in the Jobs panel within 3 s, marked with the
// process that holds it; Stop on it is `lengen stop`'s request (Pause is not offered): the
// training stops with a checkpoint, and resumed it ends as an uninterrupted run does, bit for bit.
void TestStudioJobs::jobsPanelStopsAnotherProcessesTraining()
{
    const std::string dir = test::scratchDir("panels-foreign");
    const auto yaml = QString::fromStdString(test::tinyConfig("linear_regression", "rope", 4000))
                          .replace("save_steps: 10", "save_steps: 100")
                          .replace("logging_steps: 5", "logging_steps: 50")
                          .toStdString();
    const QString config = QString::fromStdString(test::writeFile(dir, "long.yaml", yaml));
    QProcess trainer;
    trainer.start(QStringLiteral(LENGEN_CLI_PATH), {"train", config, "--seed", "11", "--out", QString::fromStdString(dir + "/a"),
                                                    "--threads", "1", "--device", "cpu"});
    QString err;
    const QString runFile = test::waitForRunFile(trainer, err);
    QVERIFY2(!runFile.isEmpty(), qPrintable(err));
    ui::RunController controller;
    ui::JobsPanel panel(controller);
    QElapsedTimer clock;
    clock.start();
    panel.setFoldersSource([dir] { return QStringList{QString::fromStdString(dir)}; });
    QTRY_VERIFY_WITH_TIMEOUT(!panel.otherJobs().empty(), 3000);
    QVERIFY2(clock.elapsed() <= 3000, qPrintable(QString::number(clock.elapsed())));
    const auto found = panel.otherJobs().front();
    QCOMPARE(found.kind, engine::JobKindId::Training);
    QCOMPARE(QFileInfo(QString::fromStdString(found.subject)), QFileInfo(runFile));
    QCOMPARE(QString::fromStdString(found.holder).section(':', 1), QString::number(trainer.processId()));
    QTRY_VERIFY(panel.rowTexts().join('\n').contains("running · held by " + QString::fromStdString(found.holder)));
    // Opened in the Train tab, the run says who trains it and offers Stop.
    ui::TrainingView view(controller);
    view.showRunLog(runFile);
    QCOMPARE(view.trainedElsewhereBy(), QString::fromStdString(found.holder));
    QVERIFY2(view.headerText().contains("trained by " + QString::fromStdString(found.holder)), qPrintable(view.headerText()));
    QVERIFY(view.controlsEnabled());
    QVERIFY(panel.selectOther(found.key()));
    QVERIFY(panel.actionEnabled(ui::JobsPanel::Action::Stop));
    QVERIFY(!panel.actionEnabled(ui::JobsPanel::Action::Pause));
    QVERIFY(panel.actionEnabled(ui::JobsPanel::Action::OpenRun));
    QSignalSpy said(&panel, &ui::JobsPanel::statusMessage);
    panel.trigger(ui::JobsPanel::Action::Stop);
    QVERIFY(said.count() == 1 && said.first().at(0).toString().contains("as `lengen stop`"));
    QVERIFY(trainer.waitForFinished(60000));
    QCOMPARE(trainer.exitCode(), 130);
    const auto stopped = engine::readRunInfo(runFile.toStdString());
    QCOMPARE(stopped.status, std::string("cancelled"));
    QVERIFY2(stopped.checkpointStep > 0 && stopped.checkpointStep < 4000, qPrintable(QString::number(stopped.checkpointStep)));
    QTRY_VERIFY_WITH_TIMEOUT(panel.otherJobs().empty(), 5000);  // nothing trains it now
    // Resumed, it ends where an uninterrupted run of the same seed ends, bit for bit.
    const auto resumed = test::runLengen({"train", "--resume", runFile, "--threads", "1", "--device", "cpu", "-q"}, 300000);
    QVERIFY2(resumed.code == 0, qPrintable(resumed.err));
    const auto plain = test::runLengen({"train", config, "--seed", "11", "--out", QString::fromStdString(dir + "/b"),
                                        "--threads", "1", "--device", "cpu", "-q"}, 300000);
    QVERIFY2(plain.code == 0, qPrintable(plain.err));
    const auto a = engine::readTrainLog(runFile.toStdString());
    const auto b = engine::readTrainLog(plain.out.trimmed().toStdString());
    QCOMPARE(a.step, b.step);
    QCOMPARE(a.loss, b.loss);
}

// Issue 52, item 3: the dialog proposes a folder that is free (it proposed the last sweep's,
// then refused it), and a sweep that cannot be created keeps the dialog open with every choice
// and the error beside its field; NoPE under randomized positions in every cell is left out
// under "leave out combinations the config refuses" (it failed as "refused in every
// combination").
void TestStudioJobs::newSweepDialogKeepsItsChoicesAfterARefusal()
{
    const QString work = QString::fromStdString(test::scratchDir("studio-sweep-folder"));
    const QString before = QDir::currentPath();
    QDir::setCurrent(work);
    QDir().mkpath(work + "/sweeps/sweep");
    test::writeFile((work + "/sweeps/sweep").toStdString(), "index.json", "{}");
    studio::MainWindow w(options());
    auto* setup = w.findChild<ui::SetupPanel*>();
    setup->setText(QString::fromStdString(test::tinyConfig()));
    QVERIFY(setup->validate().isEmpty());
    setup->findChild<QPushButton*>("newSweep")->click();
    auto* dialog = w.findChild<QDialog*>("newSweepDialog");
    QVERIFY(dialog && dialog->isVisible());
    auto* folder = dialog->findChild<QLineEdit*>("folder");
    QCOMPARE(folder->text(), work + "/sweeps/sweep-2");
    // An existing folder, typed: refused by the job; the dialog stays with its choices.
    for (auto* box : dialog->findChildren<QCheckBox*>())
        if (const QString pe = box->objectName(); !pe.isEmpty() && pe != "skipRefused")
            box->setChecked(pe == "rope" || pe == "nope");
    dialog->findChild<QSpinBox*>()->setValue(1);
    dialog->findChild<QLineEdit*>("sets")->setText("training.random_positions.max_position=64");
    dialog->findChild<QCheckBox*>("skipRefused")->setChecked(true);
    folder->setText(work + "/sweeps/sweep");
    dialog->findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok)->click();
    QVERIFY(waitIdle(w.controller(), 60000));
    auto* problem = dialog->findChild<QLabel*>("problem");
    QTRY_VERIFY2(problem->text().contains("already exists"), qPrintable(problem->text()));
    QVERIFY(dialog->isVisible());
    QVERIFY(folder->styleSheet().contains("B00020"));
    QCOMPARE(dialog->findChild<QCheckBox*>("nope")->isChecked(), true);
    QCOMPARE(dialog->findChild<QLineEdit*>("sets")->text(), QString("training.random_positions.max_position=64"));
    // The free folder: created, NoPE under randomized positions left out, the dialog closed.
    folder->setText(work + "/sweeps/sweep-2");
    dialog->findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok)->click();
    QVERIFY(waitIdle(w.controller(), 60000));
    QTRY_VERIFY(!w.findChild<QDialog*>("newSweepDialog") || !w.findChild<QDialog*>("newSweepDialog")->isVisible());
    const auto index = engine::readSweepIndex((work + "/sweeps/sweep-2").toStdString());
    QCOMPARE(index.cells.size(), size_t(1));  // rope; nope left out
    QCOMPARE(index.skipped.size(), size_t(1));
    // Issue 53: its job row says what it did, not "finished: 1 cell(s) finished" before any ran.
    const auto jobs = w.controller().jobs();
    QVERIFY(std::any_of(jobs.begin(), jobs.end(), [](const ui::JobInfo& j) {
        return j.kind == ui::JobKind::Sweep && j.message == QStringLiteral("created 1 cell(s), left out 1");
    }));
    QDir::setCurrent(before);
}

QTEST_MAIN(TestStudioJobs)
#include "tst_studio_jobs.moc"
