// The Runs list's filter model (widgets/panels/runs/run_filter_model.h, issue 70): the runs a
// filter shows and what it says it cannot match, over the runs of a folder. No window.

#include <QtTest>

#include "run_filter_model.h"
#include "run_table_model.h"
#include "test_support.h"

using namespace lengen;

class TstRunFilterModel final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void termsAndTextNarrowTheRuns();
    void whatCannotMatchIsSaid();

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
}

QTEST_GUILESS_MAIN(TstRunFilterModel)
#include "tst_run_filter_model.moc"
