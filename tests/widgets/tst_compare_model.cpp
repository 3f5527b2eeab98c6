// The Compare tab's model (widgets/panels/compare/compare_model.h, issue 70): the methods the
// runs offer and the choice kept across them, what the tab would show for the choices, and the
// files it follows. No window.

#include <QtTest>

#include "compare_model.h"
#include "test_support.h"

using namespace lengen;

class TstCompareModel final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void methodsOfferedAndTheChoiceKept();
    void whatItShowsForTheChoices();
    void followsTheFilesItDraws();

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

QTEST_GUILESS_MAIN(TstCompareModel)
#include "tst_compare_model.moc"
