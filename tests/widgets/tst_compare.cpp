// Compare, offscreen, on runs trained here (issue 52): a group is one colour in every method,
// a group averaging evaluations made differently says so, panels mode keeps its line short, and
// the config table shows values readably; what a comparison drew is recorded as it reads.

#include <QTest>

#include "compare_figure.h"
#include "compare_view.h"
#include "figure_builder.h"
#include "lengen/engine/run_file.h"
#include "test_support.h"

#include <QTableWidget>

using namespace lengen;

class TestCompare final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void compareFormatsDifferingValues();
    void compareGroupKeepsItsColourAndFlagsMixedEvaluations();
};

void TestCompare::compareFormatsDifferingValues()
{
    QCOMPARE(ui::shownConfigValue("11.555555555555555"), QStringLiteral("11.5556"));
    QCOMPARE(ui::shownConfigValue("2.029850746268657"), QStringLiteral("2.02985"));
    QCOMPARE(ui::shownConfigValue(""), QStringLiteral("—"));
    for (const char* kept : {"rope", "1.0e-3", "50000", "[22, 44]", "0.125", "1e-08"})
        QCOMPARE(ui::shownConfigValue(kept), QString::fromUtf8(kept));
}

// Issue 52, item 4: a group is one colour in every method (the RoPE group was pink where one of
// its runs lacked the method and vermilion elsewhere); a group averaging evaluations of
// different prompt counts says so in its legend, the notes and the table; panels mode says
// what it left out in one line, the list in its tooltip.
void TestCompare::compareGroupKeepsItsColourAndFlagsMixedEvaluations()
{
    const auto dir = test::scratchDir("views-compare-groups");
    const auto a = test::trainTiny(dir, "rope", 7), b = test::trainTiny(dir, "rope", 8);
    test::evaluateSmall(a, {"standard", "ood_length"}, 8);
    test::evaluateSmall(b, {"standard"}, 16);
    const QStringList runs{QString::fromStdString(a), QString::fromStdString(b)};
    ui::CompareOptions byPe;
    byPe.group = ui::CompareGroup::PositionEncoding;
    const auto standard = ui::compareRuns(runs, "standard", false, byPe);
    const auto ood = ui::compareRuns(runs, "ood_length", false, byPe);
    QCOMPARE(ood.missing, QStringList{runs[1]});
    QCOMPARE(standard.figure.series.size(), size_t(1));
    QCOMPARE(ood.figure.series.size(), size_t(1));
    QCOMPARE(ood.figure.series[0].color, standard.figure.series[0].color);  // one group, one colour
    QVERIFY(ood.figure.series[0].color != plots::runColor(engine::readRunInfo(a).runId));
    QVERIFY2(standard.figure.series[0].name.find("⚠ mixed prompts 8/16") != std::string::npos,
             standard.figure.series[0].name.c_str());
    QVERIFY2(standard.notes.join(" ").contains("averages evaluations of different prompts 8/16"),
             qPrintable(standard.notes.join(" | ")));
    QVERIFY(ood.figure.series[0].name.find("mixed") == std::string::npos);  // one evaluation
    // Issue 56 §1: what Compare drew is recorded as it reads the runs (its provenance lists
    // these): each run with the method and the evaluation its curve comes from, none other.
    QCOMPARE(standard.sources.size(), size_t(2));
    QCOMPARE(standard.sources[1].evaluations.size(), size_t(1));
    QCOMPARE(standard.sources[1].evaluations[0].prompts, 16);
    QCOMPARE(standard.sources[1].run.runId, engine::readRunInfo(b).runId);
    QCOMPARE(ood.sources.size(), size_t(1));  // the run without ood_length drew nothing
    QCOMPARE(ood.sources[0].run.runId, engine::readRunInfo(a).runId);
    ui::CompareView view;
    view.setRuns(runs);
    QVERIFY(view.setMethod("standard"));
    bool row = false;
    for (int r = 0; r < view.differences()->rowCount(); ++r)
        row = row || (view.differences()->verticalHeaderItem(r)->text() == "evaluation: prompts" &&
                      view.differences()->item(r, 0)->text() == "8" &&
                      view.differences()->item(r, 1)->text() == "16");
    QVERIFY2(row, "the table has the prompts of each run's evaluation");
    QVERIFY(view.setMethod(ui::CompareView::allMethodsText()));
    QVERIFY2(view.infoText().contains("1 curve(s) left out, not evaluated (hover for which)") &&
                 !view.infoText().contains('\n'),
             qPrintable(view.infoText()));
    QVERIFY2(view.infoToolTip().contains("from ood_length"), qPrintable(view.infoToolTip()));
}

QTEST_MAIN(TestCompare)
#include "tst_compare.moc"
