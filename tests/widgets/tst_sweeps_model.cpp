// The Sweeps tab's model (widgets/panels/sweeps/sweeps_model.h, issue 70): the grid's layout
// from the axes that vary, each square's marks and colour from the cells' states, the line
// under the grid, when the aggregate is due, and what the last Run here said. No window, no
// training: the sweep is created, its cells' states are given.

#include <QtTest>

#include "lengen/engine/jobs.h"
#include "lengen/engine/sweep.h"
#include "lengen/engine/sweep_run.h"
#include "sweeps_model.h"
#include "test_support.h"

using namespace lengen;
using S = engine::SweepCellState;

class TstSweepsModel final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void gridFromTheAxesThatVary();
    void squaresSayTheirCellsStates();
    void summaryAndTheAggregateDue();
    void holdersAreNamedWhileTheyRun();
    void titleSaysOverridesApart();
    void runsHereBelongToTheirSweep();
    void theAggregateAndResumePlanAreTheSweepShowns();

private:
    // The model on a rope × nope × 2 seeds sweep, with the cells in `states` (by index).
    std::vector<engine::CellStatus> statuses(const ui::SweepsModel& m,
                                             const std::vector<S>& states) const;
    QString m_dir;
};

void TstSweepsModel::initTestCase()
{
    m_dir = QString::fromStdString(test::scratchDir("sweeps-model")) + "/S";
    engine::createSweep(test::tinySweep(m_dir.toStdString(), {"rope", "nope"}, 2, 20));
}

std::vector<engine::CellStatus> TstSweepsModel::statuses(const ui::SweepsModel& m,
                                                         const std::vector<S>& states) const
{
    std::vector<engine::CellStatus> out;
    for (const auto& cell : m.index()->cells) {
        engine::CellStatus s;
        s.cell = &cell;
        s.state = states.at(size_t(cell.index));
        s.stage = s.state == S::Running     ? "train"
                  : s.state == S::Cancelled ? "stopped"  // as the cell's state file says it
                                            : "";
        s.step = 10;
        s.totalSteps = 20;
        if (s.state == S::Done)
            s.runFile = "/runs/" + cell.name + "/run.h5";
        out.push_back(s);
    }
    return out;
}

void TstSweepsModel::gridFromTheAxesThatVary()
{
    ui::SweepsModel m;
    m.setSweep(m_dir, engine::readSweepIndex(m_dir.toStdString()));
    QCOMPARE(m.rowHeaders(), QStringList{"cells"});  // one varying axis but the seed: columns
    QCOMPARE(m.columnHeaders().size(), qsizetype(2));
    QVERIFY2(m.title().contains("4 cells"), qPrintable(m.title()));
    QCOMPARE(m.square(0, 0).cells.size(), size_t(2));  // the two seeds of one encoding
    QVERIFY(m.square(5, 5).cells.empty());             // outside the grid: nothing
}

void TstSweepsModel::squaresSayTheirCellsStates()
{
    ui::SweepsModel m;
    m.setSweep(m_dir, engine::readSweepIndex(m_dir.toStdString()));
    const auto first = m.square(0, 0).cells, second = m.square(0, 1).cells;
    std::vector<S> states(4, S::Pending);
    states[size_t(first[0])] = S::Done;
    states[size_t(first[1])] = S::Running;
    states[size_t(second[0])] = S::Failed;
    m.setStatuses(statuses(m, states));
    const auto a = m.square(0, 0);
    QCOMPARE(a.text, QStringLiteral("✔  ▶50%"));
    QCOMPARE(a.worst, S::Running);
    QVERIFY2(a.tip.contains("running (train) at step 10 of 20"), qPrintable(a.tip));
    // Issue 80, defect 16: the state said once ("cancelled stopped 2235/15000" before).
    states[size_t(second[1])] = S::Cancelled;
    m.setStatuses(statuses(m, states));
    const auto tip = m.square(0, 1).tip;
    QVERIFY2(tip.contains("cancelled at step 10 of 20") && !tip.contains("stopped"),
             qPrintable(tip));
    QCOMPARE(m.square(0, 1).worst, S::Failed);
    QCOMPARE(m.runsAt(0, 0).size(), qsizetype(1));  // only the done cell has a run here
    QVERIFY(m.runsAt(0, 1).isEmpty());
}

void TstSweepsModel::summaryAndTheAggregateDue()
{
    ui::SweepsModel m;
    m.setSweep(m_dir, engine::readSweepIndex(m_dir.toStdString()));
    QVERIFY(!m.setStatuses(statuses(m, {S::Done, S::Pending, S::Pending, S::Pending})));  // first
    QCOMPARE(m.summary(false, {}),
             QStringLiteral("1 done · 0 running · 3 pending · 0 stopped · 0 failed"));
    QVERIFY(!m.setStatuses(statuses(m, {S::Done, S::Running, S::Pending, S::Pending})));
    QVERIFY(m.setStatuses(statuses(m, {S::Done, S::Done, S::Pending, S::Cancelled})));  // due
    QCOMPARE(m.summary(true, {}), QStringLiteral("2 done · 0 running · 1 pending · 0 stopped · 0 "
                                                 "failed · 1 cancelled — running here"));
    // What a Run here says: the cells it took and what became of each (the Xvfb pass: "0 of
    // the 4 cell(s) it took finished" beside "2 of 4 cells ended" read as a contradiction).
    engine::SweepRunSummary stoppedRun;
    stoppedRun.taken = 4;
    stoppedRun.stopped = 2;
    stoppedRun.done = 3;
    QCOMPARE(ui::runHereSaid(stoppedRun),
             std::string("of the 4 cell(s) it took, 0 finished and 2 stopped; 3 done before"));
    stoppedRun.failed = 1;
    QCOMPARE(ui::runHereSaid(stoppedRun),
             std::string("of the 4 cell(s) it took, 0 finished, 2 stopped and 1 failed; 3 done "
                         "before"));
    m.setLastRun("Run here: 0 of the 1 cell(s) it took finished");
    QVERIFY2(m.summary(false, {}).endsWith("— Run here: 0 of the 1 cell(s) it took finished"),
             qPrintable(m.summary(false, {})));
    QVERIFY(m.summary(false, "a free core").endsWith("— queued, waiting for a free core"));
    m.setSweep(m_dir, engine::readSweepIndex(m_dir.toStdString()));  // the same sweep again
    QVERIFY(m.summary(false, {}).contains("Run here"));
    m.setSweep(m_dir + "/", engine::readSweepIndex(m_dir.toStdString()));  // another path
    QVERIFY(!m.summary(false, {}).contains("Run here"));
    // Issue 80, defect 16: what Run here said of holders goes once they hold nothing (it stayed
    // after the terminal's sweep had exited).
    m.setLastRun("Run here: took no cell; 2 held by host:42, left to them");
    QVERIFY2(!m.summary(false, {}).contains("held by"), qPrintable(m.summary(false, {})));
}

// Found under Xvfb (issue 70, defect 4): the line under the grid named the process holding a
// cell only after Run here had ended. Cells other processes hold are named while they run.
void TstSweepsModel::holdersAreNamedWhileTheyRun()
{
    ui::SweepsModel m;
    m.setSweep(m_dir, engine::readSweepIndex(m_dir.toStdString()));
    auto st = statuses(m, {S::Running, S::Running, S::Pending, S::Pending});
    auto heldBy = [](const std::string& holder, engine::JobState state) {
        engine::JobRecord j;
        j.kind = engine::JobKindId::SweepCell;
        j.holder = holder;
        j.state = state;
        return j;
    };
    st[0].job = heldBy("elsewhere:42", engine::JobState::Running);
    // This studio's own run: not "held by".
    st[1].job = heldBy(engine::thisHolder(), engine::JobState::Running);
    st[2].job = heldBy("elsewhere:42", engine::JobState::Queued);  // queued in its `sweep run`
    m.setStatuses(st);
    QVERIFY2(m.summary(true, {}).endsWith("— running here · 2 held by elsewhere:42"),
             qPrintable(m.summary(true, {})));
    QVERIFY(!m.summary(true, {}).contains(QString::fromStdString(engine::thisHolder())));
    // What Run here said of them stands while they hold cells, and is not said twice (issue 80,
    // defect 16: "— Run here: … 2 held by elsewhere:42 … · 2 held by elsewhere:42").
    m.setLastRun("Run here: took no cell; 2 cell(s) held by elsewhere:42, left to them");
    const QString said = m.summary(false, {});
    QVERIFY2(said.count("held by elsewhere:42") == 1 && said.contains("Run here: took no cell"),
             qPrintable(said));
}

// A config axis of one value overrides every cell: the title says so apart from the axes.
void TstSweepsModel::titleSaysOverridesApart()
{
    const auto dir = test::scratchDir("sweeps-model-title");
    auto request = test::tinySweep(dir + "/T", {"rope", "nope"}, 1, 20);
    request.sets = {{"training.max_steps", {"20"}}};
    engine::createSweep(request);
    ui::SweepsModel m;
    m.setSweep(QString::fromStdString(request.outDir), engine::readSweepIndex(request.outDir));
    QVERIFY2(m.title().contains("(pe × seed; training.max_steps = 20)"), qPrintable(m.title()));
}

// Issue 80, defect 2: a run here is its sweep's; the sweep shown speaks of its own only and
// names the others.
void TstSweepsModel::runsHereBelongToTheirSweep()
{
    ui::SweepsModel m;
    QCOMPARE(m.runHere("/w/sweep-2"), quint64(0));
    m.setRunHere("/w/sweep-2", 7);
    QCOMPARE(m.runHere("/w/sweep-2"), quint64(7));
    QCOMPARE(m.runHere("/w/sw1"), quint64(0));  // shown: nothing of it runs here
    QCOMPARE(m.otherRunsHere("/w/sw1"), QStringList{"sweep-2"});
    QVERIFY(m.otherRunsHere("/w/sweep-2").isEmpty());
    m.setRunHere("/w/sweep-2", 0);
    QCOMPARE(m.runHere("/w/sweep-2"), quint64(0));
    QVERIFY(m.otherRunsHere("/w/sw1").isEmpty());
}

// Issue 80 §2: the aggregate, its figure and which stopped cells the resume plan is of were the
// view's members; the model holds them and a sweep shown anew starts without them (the view
// kept the stopped cells seen across sweeps, so another sweep with stopped cells of the same
// names kept the first sweep's plan).
void TstSweepsModel::theAggregateAndResumePlanAreTheSweepShowns()
{
    ui::SweepsModel m;
    m.setSweep(m_dir, engine::readSweepIndex(m_dir.toStdString()));
    QVERIFY(m.aggregateMethods().isEmpty());
    m.drawFigure("ood_length");  // no aggregate: no figure, no error
    QVERIFY(!m.figure());

    engine::SweepAggregate a;
    a.sweep = "s";
    a.groupBy = {"pe"};
    for (const char* method : {"standard", "ood_length"}) {
        engine::AggregateSet set;
        set.kind = "eval";
        set.name = method;
        set.group = "pe=rope";
        set.groupAxes = {{"pe", "rope"}};
        set.task = "linear_regression";
        set.trainPoints = set.trainedPoints = 3;
        set.nPoints = 4;
        set.dims = 2;
        set.zeroEstimator = 2;
        engine::AggregateCurve c;
        c.key = c.label = "RoPE";
        c.transformer = true;
        c.mean = c.low = c.high = {2, 1, 0.5, 0.7};
        c.seeds = {2, 2, 2, 2};
        c.band = "min-max";
        set.curves.push_back(c);
        a.sets.push_back(set);
    }
    m.setAggregate(a);
    QCOMPARE(m.aggregateMethods(), (QStringList{"standard", "ood_length"}));
    m.drawFigure("ood_length");
    QVERIFY(m.figure().has_value());
    QVERIFY(!m.figure()->panels.empty());
    m.setAggregate(a);  // aggregated again: the figure is drawn from the new one
    QVERIFY(!m.figure());
    m.drawFigure("ood_length");

    QVERIFY(m.stoppedCellsChanged({"000-rope-s1"}));
    QVERIFY(!m.stoppedCellsChanged({"000-rope-s1"}));  // the plan stands: not read again
    m.setResumePlan({"000-rope-s1 alone from step 20"});
    // The stopped cell's square says it too, as `lengen sweep status` does (defect 16).
    QVERIFY2(m.square(0, 0).tip.contains("Run here with members resumes 000-rope-s1 alone from "
                                         "step 20"),
             qPrintable(m.square(0, 0).tip));
    QVERIFY(!m.square(0, 1).tip.contains("resumes"));

    // Another sweep shown (here: the same folder opened again): nothing of the last one.
    m.setSweep(m_dir, engine::readSweepIndex(m_dir.toStdString()));
    QVERIFY(!m.aggregate() && !m.figure());
    QVERIFY(m.resumePlan().isEmpty());
    QVERIFY(m.stoppedCellsChanged({"000-rope-s1"}));  // its plan is read
}

QTEST_GUILESS_MAIN(TstSweepsModel)
#include "tst_sweeps_model.moc"
