// The one "rebuild, keeping only the latest" helper (widgets/run/latest_only.h, issue 70):
// requests during a pass become one more pass, synchronous passes do not nest, waiting work is
// replaced by newer work, and results come back on the owner's thread saying whether they are
// already stale. No window.

#include <QSemaphore>
#include <QSignalSpy>
#include <QTest>
#include <QThread>

#include <atomic>
#include <vector>

#include "latest_only.h"

using namespace lengen::ui;

class TestLatestOnly : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void requestsDuringAPassMakeOneMore();
    void synchronousPassesDoNotNest();
    void onlyTheNewestWaitingWorkRuns();
    void droppedWorkDoesNotRun();
    void aPassOrWorkThatThrowsLeavesItReady();
};

void TestLatestOnly::requestsDuringAPassMakeOneMore()
{
    int started = 0;
    Coalesced pass([&] { ++started; });  // ends later: done() below
    pass.request();
    QCOMPARE(started, 1);
    QVERIFY(pass.busy());
    pass.request();
    pass.request();
    pass.request();
    QCOMPARE(started, 1);  // nothing starts while one runs
    QVERIFY(pass.again());
    pass.done();
    QCOMPARE(started, 2);  // three requests, one more pass
    QVERIFY(pass.busy());
    pass.done();
    QCOMPARE(started, 2);
    QVERIFY(!pass.busy());
    pass.request();
    pass.dropWaiting();  // nothing waits: dropping changes nothing running
    QCOMPARE(started, 3);
}

void TestLatestOnly::synchronousPassesDoNotNest()
{
    // A pass that requests again and ends inside start(), five times: one loop, no recursion.
    int depth = 0, deepest = 0, passes = 0;
    Coalesced* self = nullptr;
    Coalesced pass([&] {
        deepest = std::max(deepest, ++depth);
        if (++passes < 5)
            self->request();  // e.g. a handler that enqueues while the queue is scheduled
        self->done();
        --depth;
    });
    self = &pass;
    pass.request();
    QCOMPARE(passes, 5);
    QCOMPARE(deepest, 1);
    QVERIFY(!pass.busy());
    QCOMPARE(pass.passes(), std::uint64_t(5));
}

void TestLatestOnly::onlyTheNewestWaitingWorkRuns()
{
    QSemaphore gate;  // holds the first work on its worker until every submit is made
    std::atomic<int> ran{0};
    std::vector<std::pair<int, bool>> delivered;
    Qt::HANDLE deliveredOn = nullptr;
    LatestOnly<int> latest(this, [&](int value, bool isLatest) {
        delivered.emplace_back(value, isLatest);
        deliveredOn = QThread::currentThreadId();
    });
    latest.submit([&] {
        gate.acquire();
        ++ran;
        return 1;
    });
    for (int v = 2; v <= 5; ++v)
        latest.submit([&ran, v] {
            ++ran;
            return v;
        });
    QVERIFY(latest.busy());
    gate.release();
    QTRY_COMPARE(delivered.size(), size_t(2));
    QTRY_VERIFY(!latest.busy());
    QCOMPARE(ran.load(), 2);                           // 2, 3 and 4 were replaced before they ran
    QCOMPARE(delivered[0], std::make_pair(1, false));  // stale: 5 was waiting
    QCOMPARE(delivered[1], std::make_pair(5, true));
    QCOMPARE(deliveredOn, QThread::currentThreadId());
    QCOMPARE(latest.passes(), std::uint64_t(2));
}

void TestLatestOnly::droppedWorkDoesNotRun()
{
    QSemaphore gate;
    std::atomic<int> ran{0};
    std::vector<int> delivered;
    LatestOnly<int> latest(this, [&](int value, bool) { delivered.push_back(value); });
    latest.submit([&] {
        gate.acquire();
        ++ran;
        return 1;
    });
    latest.submit([&] {
        ++ran;
        return 2;
    });
    latest.dropWaiting();
    gate.release();
    QTRY_COMPARE(delivered.size(), size_t(1));
    QTest::qWait(50);
    QCOMPARE(delivered, std::vector<int>{1});
    QCOMPARE(ran.load(), 1);
    QVERIFY(!latest.busy());
}

void TestLatestOnly::aPassOrWorkThatThrowsLeavesItReady()
{
    int started = 0;
    Coalesced pass([&] {
        if (++started == 1)
            throw std::runtime_error("first pass");
        pass.done();
    });
    bool threw = false;
    try {
        pass.request();
    } catch (const std::runtime_error&) {
        threw = true;
    }
    QVERIFY(threw);
    QVERIFY(!pass.busy());
    pass.request();  // not swallowed as "already running"
    QCOMPARE(started, 2);

    std::vector<int> delivered;
    LatestOnly<int> latest(this, [&](int value, bool) { delivered.push_back(value); });
    latest.submit([]() -> int { throw std::runtime_error("work"); });
    QTRY_VERIFY(!latest.busy());
    QVERIFY(delivered.empty());
    latest.submit([] { return 7; });
    QTRY_COMPARE(delivered, std::vector<int>{7});
}

QTEST_GUILESS_MAIN(TestLatestOnly)
#include "tst_latest_only.moc"
