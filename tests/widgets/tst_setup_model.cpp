// The Set up tab's model (widgets/panels/setup/setup_model.h, issue 70): whether Train may
// start and why not, the summary of what it will run, and the request it sends, for a draft,
// run overrides and refused fields. No window, no training.

#include <QtTest>

#include "lengen/engine/encodings.h"
#include "setup_model.h"
#include "test_support.h"

using namespace lengen;

class TstSetupModel final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void trainNeedsAValidDraftAndNoRefusal();
    void summaryAndRequestFollowTheOverrides();
    void newSweepStartsFromTheDraftAsShown();
    void theFileBehindTheDraftIsTheModels();
};

void TstSetupModel::trainNeedsAValidDraftAndNoRefusal()
{
    ui::SetupModel m;
    QVERIFY(!m.canTrain());  // nothing parsed yet
    QVERIFY(m.trainTip().contains("problems"));
    QVERIFY(m.draft().parse(test::tinyConfig(), "tiny.yaml", "."));
    QVERIFY(m.canTrain());
    m.setRefused({"Steps “1e9”", "Seed “2.5”"});
    QVERIFY(!m.canTrain());
    QCOMPARE(m.trainTip(), QStringLiteral("Not applied: Steps “1e9”, Seed “2.5”. Type a value "
                                          "the field accepts to train"));
    QCOMPARE(m.sweepTip(), m.trainTip());
    QVERIFY(!m.request("runs", "cpu"));
    m.setRefused({});  // another preset cleared them (issue 70, defect 5)
    QVERIFY(m.request("runs", "cpu").has_value());
    QVERIFY(!m.draft().parse("model: [", "broken.yaml", "."));
    QVERIFY(!m.canTrain());
    QVERIFY(m.summary().isEmpty());
}

void TstSetupModel::summaryAndRequestFollowTheOverrides()
{
    ui::SetupModel m;
    QVERIFY(m.draft().parse(test::tinyConfig("linear_regression", "rope", 20), "tiny.yaml", "."));
    QVERIFY2(m.summary().startsWith("✔ linear_regression"), qPrintable(m.summary()));
    QVERIFY2(m.summary().contains("20 steps") && !m.summary().contains("Steps field"),
             qPrintable(m.summary()));
    m.setStepsOverride(1500);
    QVERIFY2(m.summary().contains("1500 steps (Steps field; the config says 20)"),
             qPrintable(m.summary()));
    m.setSeedOverride(7);
    const auto r = m.request("/tmp/runs", "cpu");
    QVERIFY(r.has_value());
    QCOMPARE(r->label, QStringLiteral("linear_regression · RoPE"));
    QVERIFY(r->options.maxSteps && *r->options.maxSteps == 1500);
    QVERIFY(r->options.seed && *r->options.seed == 7u);
    QCOMPARE(r->options.outDir, std::string("/tmp/runs"));
    m.setStepsOverride(0);  // "as configured" again
    m.setSeedOverride(0);
    const auto plain = m.request("/tmp/runs", "cpu");
    QVERIFY(plain && !plain->options.maxSteps && !plain->options.seed);
}

// Issue 80 §1, defect 1: New sweep starts from the draft with Set up's Steps (the cells trained
// the config's 15,000 while Steps said 300); a refused field stops it with a message naming the
// field, and the summary says the refused Steps rather than the last number the box held.
void TstSetupModel::newSweepStartsFromTheDraftAsShown()
{
    ui::SetupModel m;
    QVERIFY(m.sweepBase().refusal.contains("problems"));
    QVERIFY(m.draft().parse(test::tinyConfig("linear_regression", "rope", 20), "tiny.yaml", "."));
    QCOMPARE(m.sweepBase().runs.at(0).training.maxSteps, std::int64_t(20));
    m.setStepsOverride(300);
    m.setSeedOverride(9);
    const auto base = m.sweepBase();
    QVERIFY(base.refusal.isEmpty());
    QCOMPARE(base.runs.at(0).training.maxSteps, std::int64_t(300));
    QCOMPARE(base.runs.at(0).seed, m.draft().runs().at(0).seed);  // seeds are the sweep's axis
    m.setRefused({"Steps “-500”"});
    QVERIFY(m.sweepBase().runs.empty());
    QVERIFY2(m.sweepBase().refusal.startsWith("Steps “-500” is not applied"),
             qPrintable(m.sweepBase().refusal));
    QVERIFY2(m.summary().contains("Steps “-500” not applied") && !m.summary().contains("300 steps"),
             qPrintable(m.summary()));
    // Nor a curriculum warning about the number the box held before (found in the Xvfb walk).
    m.setRefused({});
    m.setStepsOverride(5);  // ends before the curriculum does: warned
    QVERIFY2(m.summary().contains("⚠"), qPrintable(m.summary()));
    m.setRefused({"Steps “-500”"});
    QVERIFY2(!m.summary().contains("⚠"), qPrintable(m.summary()));
}

// Issue 80 §2: the file behind the draft, whether the editor differs from it and the preset
// shown were the panel's members; the model holds them, and names the source, the folder
// relative paths resolve in and where Save as… proposes to write.
void TstSetupModel::theFileBehindTheDraftIsTheModels()
{
    ui::SetupModel m;
    QCOMPARE(m.sourceName(), QStringLiteral("<editor>"));
    QCOMPARE(m.editedName(), QStringLiteral("the editor"));
    QCOMPARE(m.folder(), QDir::currentPath());
    QCOMPARE(m.defaultSavePath("/configs"), QDir::current().filePath("run_config.yaml"));
    const QString root = QDir::current().filePath("configs");
    m.setFile(root + "/quick/tiny.yaml");  // a shipped preset
    QVERIFY(!m.edited());
    QCOMPARE(m.sourceName(), root + "/quick/tiny.yaml");
    QCOMPARE(m.folder(), root + "/quick");
    QCOMPARE(m.defaultSavePath(root), QDir::current().filePath("tiny.yaml"));  // not the preset
    QVERIFY(m.draft().parse(test::tinyConfig(), "tiny.yaml", "."));
    const auto& run = m.draft().runs().front();
    QCOMPARE(m.defaultSavePath(root),  // what it trains, in the working folder
             QDir::current().filePath(QString::fromStdString(
                 run.task.name + "_" + engine::encodingOf(run).name + ".yaml")));
    m.markEdited();
    QCOMPARE(m.sourceName(), QStringLiteral("editor (edited from tiny.yaml)"));
    QCOMPARE(m.editedName(), QStringLiteral("tiny.yaml"));
    m.setFile("/home/me/mine.yaml");  // saved as the user's own: proposed again, not edited
    QVERIFY(!m.edited());
    QCOMPARE(m.defaultSavePath(root), QStringLiteral("/home/me/mine.yaml"));
    m.setPresetIndex(3);
    QVERIFY(!m.isSwitch(3));
    QVERIFY(m.isSwitch(0));
}

QTEST_GUILESS_MAIN(TstSetupModel)
#include "tst_setup_model.moc"
