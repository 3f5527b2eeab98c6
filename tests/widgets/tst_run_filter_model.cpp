// The Runs list's filter model (widgets/panels/runs/run_filter_model.h, issue 70): the runs a
// filter shows and what it says it cannot match, over the runs of a folder; and its run menu's
// model (run_menu_model.h, issue 72): what it offers for one or many runs, and a removal that
// names the process holding a run or asks with the count and size. No window.

#include <QDir>
#include <QFileInfo>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QtTest>

#include "io/writer_lock.h"
#include "lengen/engine/jobs.h"
#include "lengen/engine/run_table.h"
#include "run_filter_model.h"
#include "run_menu_model.h"
#include "run_removal_model.h"
#include "run_table_model.h"
#include "test_support.h"

using namespace lengen;

class TstRunFilterModel final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void termsAndTextNarrowTheRuns();
    void whatCannotMatchIsSaid();
    void theRunMenuOffersWhatTheSelectionAllows();
    void aRemovalAsksOrNamesTheHolder();
    void aRemovalMovesAndUndoes();
    void anyKeyOrResultIsAColumn();
    void extraCellsFollowTheRows();

private:
    ui::RunTableModel m_runs;
    QString m_rope1, m_rope2, m_nope;
};

void TstRunFilterModel::initTestCase()
{
    const auto dir = test::scratchDir("run-filter-model");
    m_rope1 = QString::fromStdString(test::trainTiny(dir, "rope", 1));
    m_rope2 = QString::fromStdString(test::trainTiny(dir, "rope", 2));
    m_nope = QString::fromStdString(test::trainTiny(dir, "nope", 1));
    m_runs.setFolders({QString::fromStdString(dir)});
    QTRY_COMPARE(m_runs.rowCount(), 3);
}

void TstRunFilterModel::termsAndTextNarrowTheRuns()
{
    ui::RunFilterModel filter(&m_runs);
    QCOMPARE(filter.rowCount(), 3);
    filter.setText("pe=rope");
    QCOMPARE(filter.rowCount(), 2);
    QCOMPARE(filter.shownRuns().size(), qsizetype(2));
    QVERIFY(!filter.shownRuns().contains(m_nope));
    filter.setText("pe=rope seed>1");  // every term holds; numbers compare as numbers
    QCOMPARE(filter.shownRuns(), QStringList{m_rope2});
    filter.setText("NoPE");  // plain text: looked for in every column
    QCOMPARE(filter.shownRuns(), QStringList{m_nope});
    filter.setText("seed=1..2 model.num_hidden_layers=2");
    QCOMPARE(filter.rowCount(), 3);
    QVERIFY(filter.hint().isEmpty());
    filter.setText({});
    QCOMPARE(filter.rowCount(), 3);
}

void TstRunFilterModel::whatCannotMatchIsSaid()
{
    ui::RunFilterModel filter(&m_runs);
    filter.setText("pee=rope");
    QCOMPARE(filter.rowCount(), 0);
    QVERIFY2(filter.hint().contains("did you mean pe"), qPrintable(filter.hint()));
    filter.setText("final_loss<abc");
    QVERIFY2(!filter.hint().isEmpty(), "a word that cannot parse is said");
    // Issue 80, defect 21: a word that cannot be a term leaves the list as the rest of the
    // filter makes it (all runs here, `sweep=` and `final_loss<abc` alike) and says why; spaces
    // around an operator are no such word ("seed >= 2" was text and a term without a key).
    for (const char* typed : {"final_loss<abc", "sweep=", "final_loss < abc"}) {
        filter.setText(typed);
        QVERIFY2(filter.rowCount() == 3, typed);
        QVERIFY2(filter.hint().contains(QString(typed).remove(' ')), qPrintable(filter.hint()));
    }
    filter.setText("pe=rope final_loss<abc");
    QCOMPARE(filter.rowCount(), 2);
    for (const char* typed : {"seed >= 2", "seed>= 2", "seed >=2"}) {
        filter.setText(typed);
        QVERIFY2(filter.hint().isEmpty(), qPrintable(filter.hint()));
        QCOMPARE(filter.shownRuns(), QStringList{m_rope2});
    }
    filter.setText("pe = rope  min_loss < 1e9");
    QCOMPARE(filter.rowCount(), 2);
}

void TstRunFilterModel::theRunMenuOffersWhatTheSelectionAllows()
{
    using A = ui::RunMenuModel::Action;
    const auto one = ui::RunMenuModel({m_rope1}).entries();
    const auto many = ui::RunMenuModel({m_rope1, m_nope}).entries();
    const std::vector<A> order{A::Open,    A::Compare,    A::Evaluate,  A::Probe,
                               A::Notes,   A::OpenFolder, A::CopyPaths, A::ExportFigures,
                               A::Archive, A::Delete};
    QCOMPARE(one.size(), order.size());
    for (size_t i = 0; i < order.size(); ++i) {
        QVERIFY(one[i].action == order[i] && many[i].action == order[i]);
        QVERIFY2(one[i].enabled, qPrintable(one[i].text));
    }
    const QString id = QFileInfo(m_rope1).dir().dirName();
    QCOMPARE(one[0].text, "Open " + id);
    QCOMPARE(one[4].text, "Notes and tags of " + id + "…");
    // Several runs: Open and Open folder want one (and say so); the rest name the count.
    QVERIFY(!many[0].enabled && many[0].why == "Select one run");
    QVERIFY(!many[5].enabled);
    QCOMPARE(many[2].text, QStringLiteral("Evaluate 2 runs"));  // also without results yet
    QCOMPARE(many[4].text, QStringLiteral("Tags of 2 runs…"));
    QCOMPARE(many[6].text, QStringLiteral("Copy 2 paths"));
    QCOMPARE(many[7].text, QStringLiteral("Export figures of 2 runs…"));
    QCOMPARE(many[9].text, QStringLiteral("Delete 2 runs…"));
    // A sweep's cell: Archive and Delete are offered disabled, saying why (they were refused
    // only after the confirmation).
    const auto cells = ui::RunMenuModel({m_rope1, m_nope}, {"", "quick-pe"}).entries();
    for (const size_t i : {size_t(8), size_t(9)}) {
        QVERIFY(!cells[i].enabled);
        QVERIFY2(cells[i].why.contains("is a cell of sweep quick-pe"), qPrintable(cells[i].why));
    }
    QVERIFY(cells[2].enabled);  // Evaluate still is
    // Issue 80, defect 6: a run this studio's job holds is named as the studio's, with Archive
    // and Delete offered disabled (they were enabled, then refused naming "another process").
    const ui::RunMenuModel busy({m_rope1, m_nope}, {}, {"", "evaluating"});
    const auto held = busy.entries();
    for (const size_t i : {size_t(8), size_t(9)}) {
        QVERIFY(!held[i].enabled);
        QVERIFY2(held[i].why.startsWith("this studio is evaluating") &&
                     held[i].why.contains("see Jobs"),
                 qPrintable(held[i].why));
    }
    const auto refused = ui::RunRemovalModel::plan(busy, engine::RunRemoval::Trash);
    QVERIFY(!refused.allowed);
    QVERIFY(refused.text.startsWith("this studio is evaluating"));
}

void TstRunFilterModel::aRemovalAsksOrNamesTheHolder()
{
    const ui::RunMenuModel menu({m_rope1, m_rope2});
    auto r = ui::RunRemovalModel::plan(menu, engine::RunRemoval::Trash);
    QVERIFY2(r.allowed && r.text.startsWith("Move 2 runs (") && r.text.contains("to the trash"),
             qPrintable(r.text));
    QCOMPARE(int(r.plan.moves.size()), 2);
    QVERIFY(r.plan.bytes > 0);
    {
        engine::io::WriterLock training(m_rope2.toStdString());  // as a training holds it
        r = ui::RunRemovalModel::plan(menu, engine::RunRemoval::Archive);
        QVERIFY2(!r.allowed &&
                     r.text.contains(QString::fromStdString("trained by " + engine::thisHolder())),
                 qPrintable(r.text));
    }
    QVERIFY(QFile::exists(m_rope1) && QFile::exists(m_rope2));  // a plan moves nothing
    ui::RunRemovalModel refusedOne;
    QVERIFY(refusedOne.carryOut(r).isEmpty());  // a refused plan moves nothing either
    QVERIFY(!refusedOne.canUndo());
}

// Issue 82 §5: plan → move → undo through one model. Delete moves the runs to the trash and
// says so; Undo puts them back; a run put back by `lengen restore` leaves nothing to undo.
void TstRunFilterModel::aRemovalMovesAndUndoes()
{
    const auto dir = test::scratchDir("run-removal-model");
    QStringList runs;
    for (const char* name : {"a", "b"}) {
        QVERIFY(QDir().mkpath(QString::fromStdString(dir) + "/" + name));
        runs << QString::fromStdString(dir) + "/" + name + "/run.h5";
        QVERIFY(QFile::copy(m_rope1, runs.back()));
    }
    ui::RunRemovalModel removal;
    QVERIFY(removal.movedText().isEmpty());
    auto plan = ui::RunRemovalModel::plan(ui::RunMenuModel(runs), engine::RunRemoval::Trash);
    QVERIFY2(plan.allowed, qPrintable(plan.text));
    QString error;
    QCOMPARE(removal.carryOut(plan, &error), runs);
    QVERIFY(error.isEmpty());
    QVERIFY(!QFile::exists(runs[0]) && !QFile::exists(runs[1]));
    QCOMPARE(removal.movedText(), QStringLiteral("Moved 2 runs to the trash"));
    QVERIFY(removal.canUndo() && !removal.forgetRestoredElsewhere());
    const auto undone = removal.undo();
    QCOMPARE(undone.back, 2);
    QVERIFY(undone.refused.isEmpty());
    QVERIFY(QFile::exists(runs[0]) && QFile::exists(runs[1]));
    QVERIFY(!removal.canUndo());

    // Archived, then put back by `lengen restore` (here: the engine's call): Undo goes.
    plan = ui::RunRemovalModel::plan(ui::RunMenuModel({runs[0]}), engine::RunRemoval::Archive);
    QCOMPARE(removal.carryOut(plan), QStringList{runs[0]});
    QCOMPARE(removal.movedText(), QStringLiteral("Moved a to the archive"));
    engine::restoreRuns(plan.plan.moves.front().to);
    QVERIFY(removal.forgetRestoredElsewhere());
    QVERIFY(!removal.canUndo());
    QCOMPARE(removal.undo().back, 0);
}

// Issue 72: the Runs list as a table of results — any config key or stored result is a column
// after the fixed ones, named as `lengen runs --columns` names it; numbers sort as numbers.
void TstRunFilterModel::anyKeyOrResultIsAColumn()
{
    const auto offered = m_runs.availableColumns();
    for (const char* key : {"final_loss", "min_loss", "steps_per_s", "training.learning_rate"})
        QVERIFY2(offered.contains(key), key);
    m_runs.setExtraColumns({"training.learning_rate", "final_loss", "no.such.key"});
    const int first = ui::RunTableModel::ColumnCount;
    QCOMPARE(m_runs.columnCount(), first + 3);
    QCOMPARE(m_runs.headerData(first + 1, Qt::Horizontal, Qt::DisplayRole).toString(),
             QStringLiteral("final_loss"));
    const auto loss = m_runs.index(0, first + 1);
    bool number = false;
    loss.data(Qt::DisplayRole).toString().toDouble(&number);
    QVERIFY2(number, qPrintable(loss.data().toString()));
    QCOMPARE(loss.data(Qt::UserRole).typeId(), QMetaType::Double);      // sorts as a number
    QVERIFY(!m_runs.index(0, first + 2).data(Qt::UserRole).isValid());  // no value: none
    QVERIFY(!m_runs.index(0, first).data().toString().isEmpty());
    // Sorted by the loss column, the rows come in loss order.
    QSortFilterProxyModel sorted;
    sorted.setSourceModel(&m_runs);
    sorted.setSortRole(Qt::UserRole);
    sorted.sort(first + 1);
    for (int r = 1; r < sorted.rowCount(); ++r)
        QVERIFY(sorted.index(r - 1, first + 1).data(Qt::UserRole).toDouble() <=
                sorted.index(r, first + 1).data(Qt::UserRole).toDouble());
    m_runs.setExtraColumns({});
    QCOMPARE(m_runs.columnCount(), first);
}

// Issue 82 §3: a row's extra cells are made when the rows or the columns change (a sort compares
// stored values): a run that lands after the columns were chosen has its cells, and a row read
// again repaints every column, the extra ones included.
void TstRunFilterModel::extraCellsFollowTheRows()
{
    const auto dir = test::scratchDir("run-filter-model-extra");
    QVERIFY(QDir().mkpath(QString::fromStdString(dir) + "/a"));
    const QString first = QString::fromStdString(dir) + "/a/run.h5";
    QVERIFY(QFile::copy(m_rope1, first));
    ui::RunTableModel runs;
    runs.setFolders({QString::fromStdString(dir)});
    QCOMPARE(runs.rowCount(), 1);
    runs.setExtraColumns({"min_loss", "training.learning_rate"});
    const int loss = ui::RunTableModel::ColumnCount;
    QCOMPARE(runs.index(0, loss).data(Qt::UserRole).toDouble(),
             engine::runCell(*runs.row(0).entry, "min_loss").value);
    // A run copied in after the columns were chosen: the next look lists it with its cells.
    QVERIFY(QDir().mkpath(QString::fromStdString(dir) + "/b"));
    QVERIFY(QFile::copy(m_nope, QString::fromStdString(dir) + "/b/run.h5"));
    QVERIFY(runs.poll());
    QCOMPARE(runs.rowCount(), 2);
    const int added = runs.rowOfPath(QString::fromStdString(dir) + "/b/run.h5");
    QCOMPARE(runs.index(added, loss).data(Qt::UserRole).toDouble(),
             engine::runCell(*runs.row(added).entry, "min_loss").value);
    QVERIFY(!runs.index(added, loss + 1).data().toString().isEmpty());
    // A row read again says all of it changed, through the last extra column.
    QSignalSpy changed(&runs, &QAbstractItemModel::dataChanged);
    runs.rereadRun(first);
    QCOMPARE(changed.count(), 1);
    QCOMPARE(changed.at(0).at(1).toModelIndex().column(), runs.columnCount() - 1);
}

QTEST_GUILESS_MAIN(TstRunFilterModel)
#include "tst_run_filter_model.moc"
