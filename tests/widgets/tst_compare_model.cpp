// The Compare tab's model (widgets/panels/compare/compare_model.h, issue 70): the methods the
// runs offer and the choice kept across them, what the tab would show for the choices, and the
// files it follows. No window.

#include <QtTest>

#include "compare_model.h"
#include "lengen/engine/run_file.h"
#include "test_support.h"

using namespace lengen;

class TstCompareModel final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void methodsOfferedAndTheChoiceKept();
    void whatItShowsForTheChoices();
    void followsTheFilesItDraws();
    void loggedColumnsSmoothAndTakeATimeAxis();

private:
    QString m_a, m_b, m_plain;  // a: standard + ood_length; b: standard; plain: none
};

void TstCompareModel::initTestCase()
{
    const auto dir = test::scratchDir("compare-model");
    const auto a = test::trainTiny(dir, "rope", 1), b = test::trainTiny(dir, "nope", 1);
    test::evaluateSmall(a, {"standard", "ood_length"}, 8);
    test::evaluateSmall(b, {"standard"}, 8);
    m_a = QString::fromStdString(a);
    m_b = QString::fromStdString(b);
    m_plain = QString::fromStdString(test::trainTiny(dir, "alibi", 1));
}

void TstCompareModel::methodsOfferedAndTheChoiceKept()
{
    ui::CompareModel m;
    m.setRuns({m_a, m_b});
    QCOMPARE(m.evaluationMethods(),
             (QStringList{"ood_length", "standard", ui::CompareModel::allMethodsText()}));
    QCOMPARE(m.method(), QStringLiteral("ood_length"));  // the default where offered
    QVERIFY(m.loggedMethods().contains("training: loss"));
    QVERIFY(m.setMethod("standard"));
    QVERIFY(!m.setMethod("nonsense"));
    QCOMPARE(m.method(), QStringLiteral("standard"));
    m.setRuns({m_b});  // still offered: kept
    QCOMPARE(m.evaluationMethods(), QStringList{"standard"});
    QCOMPARE(m.method(), QStringLiteral("standard"));
    m.setRuns({m_plain});  // nothing evaluated: the training loss
    QVERIFY(m.evaluationMethods().isEmpty());
    QCOMPARE(m.method(), QStringLiteral("training: loss"));
    QVERIFY(m.followsLogs());
    m.setRuns({m_a, m_b});  // a logged column stays chosen while offered (always)
    QCOMPARE(m.method(), QStringLiteral("training: loss"));
}

void TstCompareModel::whatItShowsForTheChoices()
{
    ui::CompareModel m;
    m.setRuns({m_a, m_b});
    m.setGrouping(ui::CompareGroup::EachRun, {}, engine::BandKind::Auto);
    auto shown = m.rebuild();
    QCOMPARE(shown.missing, QStringList{m_b});  // no ood_length
    QVERIFY2(shown.info.startsWith("1 of 2 runs compared; left out, not evaluated with ood_length"),
             qPrintable(shown.info));
    QVERIFY(shown.offerEvaluate);
    QCOMPARE(shown.spec.series.size(), size_t(1));
    QVERIFY(!shown.spec.y.log);
    // The legend beside the curves by default (inside, it covered them: found under Xvfb).
    QCOMPARE(shown.spec.legend, plots::LegendPlace::OutsideRight);
    m.setView(true, true);
    shown = m.rebuild();
    QVERIFY(shown.spec.y.log);
    QCOMPARE(shown.spec.legend, plots::LegendPlace::OutsideRight);
    QVERIFY(m.setMethod("training: loss"));
    m.setLogY(std::nullopt);
    shown = m.rebuild();
    QVERIFY(shown.spec.y.log);  // a loss is log by itself
    m.setLogY(false);           // unticked: linear (it stayed log whatever the box said)
    QVERIFY(!m.rebuild().spec.y.log);
    shown = m.rebuild();
    QVERIFY(shown.missing.isEmpty());
    QVERIFY(!shown.offerEvaluate);  // evaluating makes no training log
    QCOMPARE(shown.spec.series.size(), size_t(2));
    QVERIFY(m.setMethod(ui::CompareModel::allMethodsText()));
    shown = m.rebuild();
    QVERIFY(shown.panels.has_value());
    QCOMPARE(shown.panels->panels.size(), size_t(2));  // ood_length and standard
    QVERIFY2(shown.info.startsWith("2 method(s) side by side; 1 curve(s) left out"),
             qPrintable(shown.info));
    // A group that mixes more than its key says so in the panels' line too (defect 12).
    m.setGrouping(ui::CompareGroup::Task, {}, engine::BandKind::Auto);
    shown = m.rebuild();
    QVERIFY2(shown.info.contains("also differ in"), qPrintable(shown.info));
    // A key whose last part says nothing alone is named with its parent ("interval=800" twice
    // was ambiguous, found under Xvfb).
    QVERIFY(m.setMethod("standard"));
    m.setGrouping(ui::CompareGroup::Keys, "task.curriculum.points.end", engine::BandKind::Auto);
    shown = m.rebuild();
    QVERIFY(!shown.spec.series.empty());
    QVERIFY2(shown.spec.series.front().name.rfind("points.end=", 0) == 0,
             shown.spec.series.front().name.c_str());
    const auto table = m.table();
    QCOMPARE(table.runNames.size(), qsizetype(2));
    QVERIFY(!table.rows.empty());
}

// An evaluation stored since the last rebuild: the model says so, and rebuilding draws it.
void TstCompareModel::followsTheFilesItDraws()
{
    const auto dir = test::scratchDir("compare-model-follow");
    const auto run = test::trainTiny(dir, "rope", 2);
    ui::CompareModel m;
    m.setRuns({QString::fromStdString(run), m_a});
    QVERIFY(m.setMethod("ood_length"));
    QCOMPARE(m.rebuild().missing.size(), qsizetype(1));
    QVERIFY(!m.changedOnDisk());
    test::evaluateSmall(run, {"ood_length"}, 8);
    QVERIFY(m.changedOnDisk());
    m.setRuns(m.runs());
    QVERIFY(m.rebuild().missing.isEmpty());
    QVERIFY(!m.changedOnDisk());
}

// Issue 72, item 3: a logged column smoothed as the Train tab smooths (an EMA written here, not
// LenGen's), and drawn against each run's training clock or the wall time.
void TstCompareModel::loggedColumnsSmoothAndTakeATimeAxis()
{
    ui::CompareModel m;
    const QStringList runs{m_a, m_b, m_plain};
    m.setRuns(runs);
    QVERIFY(m.setMethod("training: loss"));
    m.setGrouping(ui::CompareGroup::EachRun, {}, engine::BandKind::Auto);
    std::vector<engine::TrainLog> logs;
    std::vector<engine::RunFileInfo> infos;
    for (const auto& r : runs) {
        logs.push_back(engine::readTrainLog(engine::locateRunFile(r.toStdString())));
        infos.push_back(engine::readRunInfo(engine::locateRunFile(r.toStdString())));
    }
    auto shown = m.rebuild();
    QCOMPARE(shown.spec.series.size(), size_t(3));
    QCOMPARE(shown.spec.series[0].y, logs[0].loss);  // raw by default
    m.setSmoothing(0.8);
    shown = m.rebuild();
    QCOMPARE(shown.spec.y.label, std::string("training loss"));
    QVERIFY2(shown.spec.title.find(", EMA 0.80") != std::string::npos, shown.spec.title.c_str());
    for (size_t r = 0; r < size_t(runs.size()); ++r) {
        const auto& y = shown.spec.series[r].y;
        QCOMPARE(y.size(), logs[r].loss.size());
        double ema = logs[r].loss[0];
        for (size_t i = 0; i < y.size(); ++i) {
            ema = i == 0 ? ema : 0.8 * ema + 0.2 * logs[r].loss[i];
            QVERIFY2(std::abs(y[i] - ema) <= 1e-12 * std::abs(ema), qPrintable(QString::number(i)));
        }
    }
    // A schedule is not smoothed (its peak came out low): the learning rate as logged.
    QVERIFY(m.setMethod("training: learning rate"));
    shown = m.rebuild();
    QCOMPARE(shown.spec.series[0].y, logs[0].learningRate);
    QVERIFY(shown.spec.title.find("EMA") == std::string::npos);
    QVERIFY(m.setMethod("training: loss"));
    m.setSmoothing(5);  // clamped: a weight of 1 would hold the first value for ever
    QCOMPARE(m.choices().smoothing, 0.99);
    m.setSmoothing(0);
    m.setLoggedX(ui::LoggedX::Relative);  // each run's training clock, in seconds here
    shown = m.rebuild();
    QCOMPARE(shown.spec.x.label, std::string("relative time (s)"));
    for (size_t r = 0; r < size_t(runs.size()); ++r)
        QCOMPARE(shown.spec.series[r].x, logs[r].wallSeconds);
    m.setLoggedX(ui::LoggedX::Wall);  // creation plus clock, from the earliest creation
    shown = m.rebuild();
    const auto created = [](const engine::RunFileInfo& i) {
        return double(QDateTime::fromString(QString::fromStdString(i.createdAt), Qt::ISODate)
                          .toSecsSinceEpoch());
    };
    const double first = std::min({created(infos[0]), created(infos[1]), created(infos[2])});
    for (size_t r = 0; r < size_t(runs.size()); ++r)
        QCOMPARE(shown.spec.series[r].x.back(),
                 logs[r].wallSeconds.back() + (created(infos[r]) - first));
    QVERIFY2(shown.spec.x.label.rfind("wall time (s since ", 0) == 0, shown.spec.x.label.c_str());
    // One group of the three: its x is the mean of its runs' clocks at each step.
    m.setGrouping(ui::CompareGroup::Task, {}, engine::BandKind::MinMax);
    m.setLoggedX(ui::LoggedX::Relative);
    shown = m.rebuild();
    QCOMPARE(shown.spec.series.size(), size_t(1));
    const auto& x = shown.spec.series.front().x;
    QCOMPARE(x.size(), logs[0].step.size());
    const double mean =
        (logs[0].wallSeconds[2] + logs[1].wallSeconds[2] + logs[2].wallSeconds[2]) / 3;
    QVERIFY(std::abs(x[2] - mean) <= 1e-12 * mean);
}

QTEST_GUILESS_MAIN(TstCompareModel)
#include "tst_compare_model.moc"
