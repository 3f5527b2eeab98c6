// The Jobs panel's model (widgets/panels/jobs/jobs_model.h, issue 70, defect 14): the rows it
// would show for the studio's jobs and other processes' — their order, repeats coalesced,
// another process's training named like the studio's own, the cores line counting a
// terminal's work — and what the actions would do to the selection. No window.

#include <QtTest>

#include <algorithm>

#include "jobs_model.h"

using namespace lengen;

namespace {

engine::JobRecord own(quint64 id, engine::JobKindId kind, engine::JobState state,
                      const std::string& label, const std::string& subject)
{
    engine::JobRecord j;
    j.id = id;
    j.kind = kind;
    j.state = state;
    j.label = label;
    j.subject = subject;
    j.holder = engine::thisHolder();
    return j;
}

// A job another process on this host holds (a terminal's `lengen train`), or Slurm's task.
engine::JobRecord other(engine::JobKindId kind, engine::JobState state, const std::string& subject,
                        const std::string& holder)
{
    engine::JobRecord j;
    j.kind = kind;
    j.state = state;
    j.subject = subject;
    j.holder = holder;
    return j;
}

std::string hostHolder(int pid)
{
    const auto here = engine::thisHolder();
    return here.substr(0, here.rfind(':') + 1) + std::to_string(pid);
}

int indexOf(const std::vector<ui::JobRow>& rows, const QString& name)
{
    const auto it = std::find_if(rows.begin(), rows.end(),
                                 [&name](const ui::JobRow& r) { return r.name == name; });
    return it == rows.end() ? -1 : int(it - rows.begin());
}

}  // namespace

class TstJobsModel final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void runningAndWaitingJobsComeFirst();
    void repeatsOfOneJobAreOneRow();
    void anotherProcessesTrainingIsNamedByTaskAndEncoding();
    void terminalJobsCountTowardTheCoresInUse();
    void actionsFollowTheSelection();
    void whatEndsMuchAsksFirst();
    void rowsUnderThePointerHoldTheirPlaces();
};

// 40 ended jobs of the studio, then a terminal's running training: it is listed before them
// (it sorted below every ended row).
void TstJobsModel::runningAndWaitingJobsComeFirst()
{
    using engine::JobKindId;
    using engine::JobState;
    QList<ui::JobInfo> jobs;
    jobs << own(1, JobKindId::Training, JobState::Running, "mine · RoPE", "/r/mine/run.h5");
    jobs << own(2, JobKindId::Evaluation, JobState::Queued, "evaluate mine", "/r/mine/run.h5");
    for (int i = 0; i < 40; ++i)
        jobs << own(quint64(10 + i), JobKindId::Evaluation, JobState::Finished,
                    "evaluate run-" + std::to_string(i), "/r/run-" + std::to_string(i) + "/run.h5");
    ui::JobsModel m;
    m.setOwn(jobs);
    m.setOther({other(JobKindId::Training, JobState::Running, "/r/term/run.h5", hostHolder(4242)),
                other(JobKindId::SweepCell, JobState::Queued, "/s/sweep", "77_3")});
    const auto rows = m.rows(0);
    QCOMPARE(int(rows.size()), 44);
    QCOMPARE(rows[0].name, QStringLiteral("mine · RoPE"));
    QCOMPARE(rows[1].subject, QStringLiteral("term"));  // another process's running training
    QVERIFY2(rows[1].state.contains("held by " + QString::fromStdString(hostHolder(4242))),
             qPrintable(rows[1].state));
    QCOMPARE(rows[2].name, QStringLiteral("evaluate mine"));  // then what waits, either's
    QVERIFY2(rows[3].state.contains("pending"), qPrintable(rows[3].state));
    QCOMPARE(rows[4].name, QStringLiteral("evaluate run-0"));  // ended, newest first
}

// "aggregate sweep-a" after each of 12 cells is one row, the newest, said to be 12; another
// sweep's aggregate stays a row of its own; a running one is never folded into the ended.
void TstJobsModel::repeatsOfOneJobAreOneRow()
{
    using engine::JobKindId;
    using engine::JobState;
    QList<ui::JobInfo> jobs;
    jobs << own(100, JobKindId::Sweep, JobState::Running, "aggregate sweep-a", "/s/a/aggregate.h5");
    for (int i = 0; i < 12; ++i) {
        auto j = own(quint64(90 - i), JobKindId::Sweep, JobState::Finished, "aggregate sweep-a",
                     "/s/a/aggregate.h5");
        j.result.said = "nothing to aggregate yet (no cell evaluated)";
        j.message = j.result.said;
        jobs << j;
    }
    jobs << own(5, JobKindId::Sweep, JobState::Finished, "aggregate sweep-b", "/s/b/aggregate.h5");
    jobs << own(4, JobKindId::Sweep, JobState::Failed, "aggregate sweep-a", "/s/a/aggregate.h5");
    ui::JobsModel m;
    m.setOwn(jobs);
    const auto rows = m.rows(0);
    QCOMPARE(int(rows.size()), 4);  // a failed one stays apart from those that worked
    QCOMPARE(rows[3].id, quint64(4));
    QCOMPARE(rows[0].id, quint64(100));
    QCOMPARE(rows[1].id, quint64(90));  // the newest ended one stands for the twelve
    QCOMPARE(rows[1].repeats, 12);
    QVERIFY2(rows[1].state.endsWith("(×12)"), qPrintable(rows[1].state));
    QCOMPARE(rows[2].name, QStringLiteral("aggregate sweep-b"));
    QCOMPARE(rows[2].repeats, 1);
}

// A terminal's training was named by its run folder alone; it reads as the studio's own do.
void TstJobsModel::anotherProcessesTrainingIsNamedByTaskAndEncoding()
{
    using engine::JobKindId;
    using engine::JobState;
    ui::JobsModel m;
    const auto training =
        other(JobKindId::Training, JobState::Running, "/r/ab12/run.h5", hostHolder(4242));
    const auto unknown =
        other(JobKindId::Training, JobState::Running, "/r/cd34/run.h5", hostHolder(4243));
    m.setOther({training, unknown});
    m.setRunNamer([](const QString& run) {
        return run == "/r/ab12/run.h5" ? QStringLiteral("linear_regression · RoPE") : QString();
    });
    const auto rows = m.rows(0);
    QVERIFY(indexOf(rows, "linear_regression · RoPE") >= 0);
    QCOMPARE(rows[size_t(indexOf(rows, "linear_regression · RoPE"))].subject,
             QStringLiteral("ab12"));
    QVERIFY2(indexOf(rows, "cd34") >= 0, "a run the Runs list lacks keeps its folder's name");
    m.selectOther(QString::fromStdString(training.key()));
    QVERIFY2(m.selectedText().contains("linear_regression · RoPE"), qPrintable(m.selectedText()));
}

// Two terminal trainings on this machine: "cores: 2 of 2 in use"; it said 0. A Slurm task
// (another machine) and an ended job do not count; the studio's own taken cores add up.
void TstJobsModel::terminalJobsCountTowardTheCoresInUse()
{
    using engine::JobKindId;
    using engine::JobState;
    ui::JobsModel m;
    m.setCores(0, 4, 0);
    QCOMPARE(m.coresText(), QStringLiteral("4 cores: 0 in use here"));
    m.setOther({other(JobKindId::Training, JobState::Running, "/r/a/run.h5", hostHolder(11)),
                other(JobKindId::Evaluation, JobState::Running, "/r/b/run.h5", hostHolder(12)),
                other(JobKindId::SweepCell, JobState::Running, "/s/sweep", "77_3"),
                other(JobKindId::Training, JobState::Queued, "/r/c/run.h5", hostHolder(13))});
    QCOMPARE(m.otherCoresHere(), 2);
    QCOMPARE(m.coresText(), QStringLiteral("4 cores: 0 in use here, 2 by other processes"));
    m.setCores(1, 4, 1);
    QCOMPARE(m.coresText(),
             QStringLiteral("4 cores: 1 in use here, 2 by other processes · 1 waiting for one"));
    // More than the limit: the overload said as such (issue 80, defect 17: "cores: 3 of 2 in
    // use (1 by other processes)").
    m.setCores(2, 2, 0);
    QCOMPARE(m.coresText(),
             QStringLiteral("2 cores: 2 in use here, 2 by other processes (over by 2)"));
    QVERIFY(!ui::heldOnThisHost("77_3"));
    QVERIFY(!ui::heldOnThisHost("elsewhere-host:12"));
}

void TstJobsModel::actionsFollowTheSelection()
{
    using engine::JobKindId;
    using engine::JobState;
    using A = ui::JobsModel::Action;
    ui::JobsModel m;
    m.setOwn({own(1, JobKindId::Training, JobState::Running, "mine", "/r/mine/run.h5"),
              own(2, JobKindId::Evaluation, JobState::Queued, "evaluate mine", "/r/mine/run.h5")});
    const auto foreign =
        other(JobKindId::Training, JobState::Running, "/r/t/run.h5", hostHolder(4242));
    m.setOther({foreign});
    QVERIFY(!m.actionEnabled(A::Stop));
    QCOMPARE(m.actionTip(A::Stop), QStringLiteral("Select a job"));
    m.selectOwn(1);
    QVERIFY(m.actionEnabled(A::Pause) && m.actionEnabled(A::Stop) && !m.actionEnabled(A::Cancel));
    m.selectOwn(2);
    QVERIFY(m.actionEnabled(A::Cancel) && !m.actionEnabled(A::Pause));
    m.selectOther(QString::fromStdString(foreign.key()));
    QCOMPARE(m.selectedJob(), quint64(0));
    QVERIFY(m.actionEnabled(A::Stop) && !m.actionEnabled(A::Pause));
    QVERIFY2(m.actionTip(A::Pause).contains(QString::fromStdString(hostHolder(4242))),
             qPrintable(m.actionTip(A::Pause)));
    const auto rows = m.rows(0);
    QCOMPARE(std::count_if(rows.begin(), rows.end(),
                           [&m](const ui::JobRow& r) { return m.isSelected(r); }),
             1L);
}

// Issue 80, defect 20: Cancel on a running cell acted at once; Stop on a sweep (many cells) must
// ask, as Delete does. Queued work and one training go at once.
void TstJobsModel::whatEndsMuchAsksFirst()
{
    using engine::JobKindId;
    using engine::JobState;
    using A = ui::JobsModel::Action;
    ui::JobsModel m;
    m.setOwn({own(1, JobKindId::Sweep, JobState::Running, "sweep grid", "/s/grid"),
              own(2, JobKindId::Training, JobState::Running, "mine · RoPE", "/r/mine/run.h5")});
    auto running = other(JobKindId::SweepCell, JobState::Running, "/s/other", hostHolder(31));
    running.cell = "000-rope-s1";
    auto queued = other(JobKindId::SweepCell, JobState::Queued, "/s/other", hostHolder(31));
    queued.cell = "001-nope-s1";
    m.setOther({running, queued});
    m.selectOwn(1);
    QVERIFY2(m.confirmation(A::Stop).startsWith("Stop sweep grid?"),
             qPrintable(m.confirmation(A::Stop)));
    m.selectOwn(2);
    QVERIFY(m.confirmation(A::Stop).isEmpty());
    m.selectOther(QString::fromStdString(running.key()));
    QVERIFY2(m.confirmation(A::Cancel).contains("000-rope-s1"),
             qPrintable(m.confirmation(A::Cancel)));
    m.selectOther(QString::fromStdString(queued.key()));
    QVERIFY(m.confirmation(A::Cancel).isEmpty());
    // A cell of the sweep this studio runs is named as its job, not by the studio's pid (the
    // Xvfb pass: "“000-rope-s1” (held by vm:31752):", the studio itself).
    auto mine = other(JobKindId::SweepCell, JobState::Running, "/s/grid", engine::thisHolder());
    mine.cell = "002-rope-s2";
    m.setOther({running, queued, mine});
    m.selectOther(QString::fromStdString(mine.key()));
    QVERIFY2(m.selectedText().contains("cell of “sweep grid”, run by this studio") &&
                 !m.selectedText().contains("held by"),
             qPrintable(m.selectedText()));
}

// Issue 80, defect 19: rows shifted under the pointer as new jobs arrived at the top (a click
// meant for a cell stopped the whole sweep). While the pointer is over the list the rows keep
// their places, new ones come last; let go, the rules' order is back.
void TstJobsModel::rowsUnderThePointerHoldTheirPlaces()
{
    using engine::JobKindId;
    using engine::JobState;
    ui::JobsModel m;
    m.setOwn({own(1, JobKindId::Sweep, JobState::Running, "sweep grid", "/s/grid"),
              own(2, JobKindId::Evaluation, JobState::Queued, "evaluate a", "/r/a/run.h5")});
    QCOMPARE(m.rows(0).front().name, QStringLiteral("sweep grid"));
    m.setOrderHeld(true);
    // A training starts: running work comes first by the rules.
    m.setOwn({own(3, JobKindId::Training, JobState::Running, "new · RoPE", "/r/n/run.h5"),
              own(1, JobKindId::Sweep, JobState::Running, "sweep grid", "/s/grid"),
              own(2, JobKindId::Evaluation, JobState::Queued, "evaluate a", "/r/a/run.h5")});
    auto held = m.rows(0);
    QCOMPARE(held.size(), size_t(3));
    QCOMPARE(held[0].name, QStringLiteral("sweep grid"));  // still where the pointer was
    QCOMPARE(held[1].name, QStringLiteral("evaluate a"));
    QCOMPARE(held[2].name, QStringLiteral("new · RoPE"));  // the newcomer last
    // A job that goes (a sweep's cell that ended) keeps its row, said to have ended, so the
    // rows below do not move up under the pointer (the Xvfb pass on defect 19).
    m.setOwn({own(3, JobKindId::Training, JobState::Running, "new · RoPE", "/r/n/run.h5"),
              own(2, JobKindId::Evaluation, JobState::Queued, "evaluate a", "/r/a/run.h5")});
    held = m.rows(0);
    QCOMPARE(held.size(), size_t(3));
    QCOMPARE(held[0].name, QStringLiteral("sweep grid"));
    QVERIFY2(held[0].state.startsWith("ended"), qPrintable(held[0].state));
    QCOMPARE(held[1].name, QStringLiteral("evaluate a"));
    QCOMPARE(m.rows(0).size(), size_t(3));  // and again, while held
    m.setOrderHeld(false);
    QCOMPARE(m.rows(0).size(), size_t(2));  // let go: it is gone
    m.setOwn({own(3, JobKindId::Training, JobState::Running, "new · RoPE", "/r/n/run.h5"),
              own(1, JobKindId::Sweep, JobState::Running, "sweep grid", "/s/grid"),
              own(2, JobKindId::Evaluation, JobState::Queued, "evaluate a", "/r/a/run.h5")});
    const auto free = m.rows(0);
    QVERIFY(free[0].name == QStringLiteral("new · RoPE") ||
            free[1].name == QStringLiteral("new · RoPE"));  // running work first again
    QCOMPARE(free[2].name, QStringLiteral("evaluate a"));
}

QTEST_GUILESS_MAIN(TstJobsModel)
#include "tst_jobs_model.moc"
