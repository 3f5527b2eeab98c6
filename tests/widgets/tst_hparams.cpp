// The Hyperparameters tab (issue 55): parallel coordinates over the runs table, brushing by the
// mouse, the Runs list and Compare following the brushes, and its exports with provenance.

#include <QComboBox>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMenu>
#include <QPainter>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QToolButton>
#include <QtTest>

#include <sys/stat.h>

#include <cmath>
#include <random>
#include <set>

#include "compare_view.h"
#include "hparams_view.h"
#include "main_window.h"
#include "parallel_view.h"
#include "run_browser.h"
#include "studio_test_support.h"
#include "test_support.h"

using namespace lengen;

namespace {

// `n` runs as the run index lists them: a learning rate over three decades, depth, encoding,
// seed; a final loss and an ood_length result, except every seventh run, never evaluated.
std::vector<engine::RunIndexEntry> syntheticRuns(int n)
{
    std::mt19937 rng(11);
    std::uniform_real_distribution<double> u(0, 1);
    const char* pes[] = {"rope", "nope", "alibi"};
    std::vector<engine::RunIndexEntry> runs;
    for (int i = 0; i < n; ++i) {
        engine::RunIndexEntry e;
        e.path = "/runs/r" + std::to_string(i) + "/run.h5";
        e.info.runId = "r" + std::to_string(i);
        e.info.task = "linear_regression";
        e.info.positionEncoding = pes[i % 3];
        e.info.backbone = "llama";
        e.info.status = "done";
        e.seed = i % 4;
        e.steps = 100;
        e.info.lastLoss = 0.2 + 0.6 * u(rng);
        e.info.minLoss = e.info.lastLoss * 0.9;
        e.config["training.learning_rate"] = std::to_string(1e-5 * std::pow(10.0, 3 * u(rng)));
        e.config["model.num_hidden_layers"] = std::to_string(2 + (i / 3) % 3);
        if (e.info.positionEncoding ==
            "rope")  // a key only the encoding sets: it varies because the PE does
            e.config["patch.rope_theta"] = "10000";
        e.config["training.seed"] = std::to_string(i % 4);
        if (i % 7 != 0)
            e.results.push_back({"ood_length", 39, 319, 0.1 + u(rng), 1 + 4 * u(rng)});
        runs.push_back(std::move(e));
    }
    return runs;
}

int axisNamed(const plots::ParallelSpec& s, const std::string& name)
{
    for (size_t a = 0; a < s.axes.size(); ++a)
        if (s.axes[a].name == name)
            return int(a);
    return -1;
}

// Drags along axis `a` from fraction f0 to f1 as a user would (press, moves, release).
void drag(ui::ParallelView* plot, int a, double f0, double f1)
{
    const int x = int(std::lround(plot->axisX(a)));
    const QPoint from(x, int(std::lround(plot->fractionY(f0))));
    const QPoint to(x, int(std::lround(plot->fractionY(f1))));
    QTest::mousePress(plot, Qt::LeftButton, {}, from);
    for (int s = 1; s <= 5; ++s)
        QTest::mouseMove(plot, from + (to - from) * s / 5);
    QTest::mouseRelease(plot, Qt::LeftButton, {}, to);
}

// The view's Axes menu (null when it has none); `shown`: popped up and exposed.
QMenu* axesMenu(ui::HParamsView& view, bool shown)
{
    QMenu* menu = nullptr;
    for (auto* b : view.findChildren<QToolButton*>())
        if (b->menu())
            menu = b->menu();
    if (menu && shown)
        menu->popup(view.mapToGlobal(QPoint(10, 10)));
    return menu && shown && !QTest::qWaitForWindowExposed(menu) ? nullptr : menu;
}

// The menu's first axis that is drawn (`checked`) or not.
QAction* firstAxis(QMenu* menu, bool checked)
{
    for (auto* a : menu->actions())
        if (a->isChecked() == checked)
            return a;
    return nullptr;
}

}  // namespace

class TstHParams : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);  // QSettings of its own, not the user's
        QCoreApplication::setOrganizationName(QStringLiteral("lengen-tests"));
    }
    void viewShowsVariedKeysAndGaps();
    void brushingSelectsExactlyTheRunsInside();
    void brushesHoldTheirCategoriesAsRunsArrive();
    void chosenAxesAndBrushesOutliveANarrowedList();
    void categoriesColourAndBrushWholeCategories();
    void axesMenuStaysOpenAfterATick();
    void openingTheAxesMenuTicksNothing();
    void aDragGoesOnWhileRunsLand();
    void exportsEveryFormatWithProvenance();
    void brushesSelectInTheRunsListAndGoToCompare();
};

void TstHParams::viewShowsVariedKeysAndGaps()
{
    ui::HParamsView view;
    view.setRuns(syntheticRuns(21));
    const auto& spec = view.plot()->spec();
    // The keys that vary (not the task, the same for all), then the loss and ood_length.
    std::vector<std::string> names;
    for (const auto& a : spec.axes)
        names.push_back(a.name);
    QVERIFY(axisNamed(spec, "task") < 0);
    // A key that follows from the encoding is a column of the table, not a default axis.
    QVERIFY(axisNamed(spec, "patch.rope_theta") < 0);
    QVERIFY(std::count(names.begin(), names.end(), "patch.rope_theta") == 0);
    bool inTable = false;
    for (const auto& c : view.table().columns)
        inTable = inTable || c.name == "patch.rope_theta";
    QVERIFY(inTable);
    for (const char* name : {"pe", "training.learning_rate", "model.num_hidden_layers",
                             "final_loss", "ood_length@train", "ood_length@longest"})
        QVERIFY2(axisNamed(spec, name) >= 0, name);
    const int lr = axisNamed(spec, "training.learning_rate");
    QVERIFY(spec.axes[size_t(lr)].log);  // three decades
    QVERIFY(spec.axes[size_t(axisNamed(spec, "pe"))].categorical);
    QCOMPARE(spec.axes[size_t(spec.colorAxis)].name, std::string("ood_length@longest"));
    // Run 0 was never evaluated: a gap in the figure and an empty cell in the table, not 0.
    const int longest = axisNamed(spec, "ood_length@longest");
    QVERIFY(std::isnan(spec.value(0, longest)));
    QVERIFY(std::isfinite(spec.value(1, longest)));
    auto* table = view.tableView();
    QCOMPARE(table->model()->rowCount(), 21);
    int column = -1;
    for (int c = 0; c < table->model()->columnCount(); ++c)
        if (table->model()->headerData(c, Qt::Horizontal).toString() == "ood_length@longest")
            column = c;
    QVERIFY(column >= 0);
    auto cellOf = [&](const QString& run) {  // the table is sorted: find the run's row
        for (int r = 0; r < table->model()->rowCount(); ++r)
            if (table->model()->index(r, 0).data().toString() == run)
                return table->model()->index(r, column).data().toString();
        return QStringLiteral("(no row)");
    };
    QCOMPARE(cellOf("r0"), QString());
    QVERIFY(!cellOf("r1").isEmpty() && cellOf("r1") != "(no row)");
}

void TstHParams::brushingSelectsExactlyTheRunsInside()
{
    const auto runs = syntheticRuns(60);
    ui::HParamsView view;
    view.resize(1200, 800);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.setRuns(runs);
    QSignalSpy selected(&view, &ui::HParamsView::selectRequested);
    auto* plot = view.plot();
    const int loss = axisNamed(plot->spec(), "final_loss"), pe = axisNamed(plot->spec(), "pe");
    // Pointing at the top of the loss axis names the run with the largest loss.
    const auto top = std::max_element(runs.begin(), runs.end(), [](const auto& a, const auto& b) {
        return a.info.lastLoss < b.info.lastLoss;
    });
    QTest::mouseMove(plot, QPoint(int(std::lround(plot->axisX(loss))) + 2,
                                  int(std::lround(plot->fractionY(1.0)))));
    QTRY_COMPARE(plot->hoveredRow(), int(top - runs.begin()));
    QVERIFY(plot->rowText(plot->hoveredRow()).contains(QString::fromStdString(top->info.runId)));
    drag(plot, loss, 0.25, 0.7);
    QCOMPARE(selected.size(), 1);
    // Expected from the pixels dragged, not from the view's own inverse: the runs whose
    // final loss sits between the two rows of pixels on a linear axis from the least to the
    // largest loss.
    double lo = INFINITY, hi = -INFINITY;
    for (const auto& r : runs) {
        lo = std::min(lo, r.info.lastLoss);
        hi = std::max(hi, r.info.lastLoss);
    }
    auto fractionOfPixel = [&](double f) {
        const double y = std::lround(plot->fractionY(f));
        return (plot->fractionY(0) - y) / (plot->fractionY(0) - plot->fractionY(1));
    };
    const double vLow = lo + fractionOfPixel(0.25) * (hi - lo);
    const double vHigh = lo + fractionOfPixel(0.7) * (hi - lo);
    QStringList expected;
    for (const auto& r : runs)
        if (r.info.lastLoss >= vLow && r.info.lastLoss <= vHigh)
            expected << QString::fromStdString(r.path);
    QVERIFY(expected.size() > 5 && expected.size() < 55);
    QCOMPARE(view.insideRuns(), expected);
    QCOMPARE(selected.last().at(0).toStringList(), expected);
    QCOMPARE(view.tableView()->model()->rowCount(), expected.size());
    // A second brush, on the encoding's top category (rope): both must hold.
    drag(plot, pe, 0.8, 1.0);
    QStringList both;
    for (const auto& r : runs)
        if (expected.contains(QString::fromStdString(r.path)) && r.info.positionEncoding == "rope")
            both << QString::fromStdString(r.path);
    QVERIFY(!both.isEmpty() && both.size() < expected.size());
    QCOMPARE(view.insideRuns(), both);
    QVERIFY(view.summaryText().startsWith(QString::number(both.size()) + " of 60"));
    // A click on the loss axis removes its brush: every rope run is inside again.
    const QPoint onAxis(int(std::lround(plot->axisX(loss))), int(plot->fractionY(0.5)));
    QTest::mouseClick(plot, Qt::LeftButton, {}, onAxis);
    int ropes = 0;
    for (const auto& r : runs)
        ropes += r.info.positionEncoding == "rope";
    QCOMPARE(view.insideRuns().size(), ropes);
    QCOMPARE(selected.last().at(0).toStringList().size(), ropes);
}

// A brush on a text axis is kept by its categories' names: a run of a new encoding that sorts
// before them ("alibi") moves their indices, not what the brush holds. And with one run per
// encoding, the learning rate is an axis (a group of one run "implies" nothing).
void TstHParams::brushesHoldTheirCategoriesAsRunsArrive()
{
    auto runs = syntheticRuns(9);  // rope, nope, alibi, ...
    std::vector<engine::RunIndexEntry> two;
    for (const auto& r : runs)
        if (r.info.positionEncoding != "alibi")
            two.push_back(r);
    ui::HParamsView view;
    view.setRuns(two);
    const int pe = axisNamed(view.plot()->spec(), "pe");
    QCOMPARE(view.plot()->spec().axes[size_t(pe)].categories,
             (std::vector<std::string>{"nope", "rope"}));
    view.plot()->setBrush(pe, 0.6, 1.4);  // rope
    QStringList ropes;
    for (const auto& r : runs)
        if (r.info.positionEncoding == "rope")
            ropes << QString::fromStdString(r.path);
    QCOMPARE(view.insideRuns(), ropes);
    view.setRuns(runs);  // alibi arrives: rope is category 2 now
    QCOMPARE(view.plot()->spec().axes[size_t(pe)].categories.size(), size_t(3));
    QCOMPARE(view.insideRuns(), ropes);
    // One run per encoding: nothing follows from the encoding, every varied key is an axis.
    std::vector<engine::RunIndexEntry> three(runs.begin(), runs.begin() + 3);
    view.setRuns(three);
    QVERIFY(axisNamed(view.plot()->spec(), "training.learning_rate") >= 0);
}

// Issue 70, defect 15: Colour by offered numeric columns only, and a brush on a categorical axis
// was a 2-px tick that a click's range (1.02..1.02) selected nothing with. Any axis colours;
// a categorical brush holds whole categories.
void TstHParams::categoriesColourAndBrushWholeCategories()
{
    const auto runs = syntheticRuns(9);
    ui::HParamsView view;
    view.setRuns(runs);
    auto* colour = view.findChildren<QComboBox*>().front();
    const int pe = axisNamed(view.plot()->spec(), "pe");
    QVERIFY(pe >= 0);
    QVERIFY2(colour->findText("pe") >= 0, "a categorical column colours too");
    colour->setCurrentIndex(colour->findText("pe"));
    Q_EMIT colour->activated(colour->currentIndex());
    QCOMPARE(view.plot()->spec().colorAxis, axisNamed(view.plot()->spec(), "pe"));
    const int peNow = axisNamed(view.plot()->spec(), "pe");
    const auto& categories = view.plot()->spec().axes[size_t(peNow)].categories;
    const int rope =
        int(std::find(categories.begin(), categories.end(), "rope") - categories.begin());
    view.plot()->setBrush(peNow, rope + 0.02, rope + 0.02);  // a click-sized range on "rope"
    const auto& brush = view.plot()->spec().brushes.front();
    QCOMPARE(brush.low, double(rope));
    QCOMPARE(brush.high, double(rope));
    QStringList ropes;
    for (const auto& r : runs)
        if (r.info.positionEncoding == "rope")
            ropes << QString::fromStdString(r.path);
    QCOMPARE(view.insideRuns(), ropes);
    // Drawn a category wide: the brush box is taller than a tick.
    QImage image(900, 420, QImage::Format_ARGB32);
    image.fill(Qt::white);
    QPainter painter(&image);
    plots::paintParallelBrushes(painter, QRectF(image.rect()), view.plot()->spec());
    painter.end();
    int rows = 0;
    const int x = int(std::lround(
        plots::parallelLayout(view.plot()->spec(), QRectF(image.rect())).x[size_t(peNow)]));
    for (int y = 0; y < image.height(); ++y)
        rows += image.pixelColor(x, y) != QColor(Qt::white);
    QVERIFY2(rows > 20, qPrintable(QString::number(rows)));
}

// Issue 70, defect 15: the Axes menu closed after each tick.
void TstHParams::axesMenuStaysOpenAfterATick()
{
    ui::HParamsView view;
    view.setRuns(syntheticRuns(21));
    view.show();
    QMenu* menu = axesMenu(view, true);
    QVERIFY(menu);
    QAction* off = firstAxis(menu, false);  // a column not drawn yet
    QVERIFY(off);
    const QString name = off->text();
    QTest::mouseClick(menu, Qt::LeftButton, {}, menu->actionGeometry(off).center());
    QVERIFY(menu->isVisible());
    QVERIFY2(axisNamed(view.plot()->spec(), name.toStdString()) >= 0, qPrintable(name));
    for (auto* a : menu->actions())  // the same menu, its ticks as chosen
        if (a->text() == name)
            QVERIFY(a->isChecked());
    menu->close();
}

// Issue 70, defect 6: a slow drag while runs landed made a tiny brush at the press point, or
// none: the rebuilt plot dropped the drag. It goes on to where the mouse is released.
void TstHParams::aDragGoesOnWhileRunsLand()
{
    const auto runs = syntheticRuns(21);
    ui::HParamsView view;
    view.resize(900, 600);
    view.show();
    view.setRuns({runs.begin(), runs.begin() + 12});
    auto* plot = view.plot();
    const int lr = axisNamed(plot->spec(), "training.learning_rate");
    const int x = int(std::lround(plot->axisX(lr)));
    const auto at = [&](double f) { return QPoint(x, int(std::lround(plot->fractionY(f)))); };
    QTest::mousePress(plot, Qt::LeftButton, {}, at(0.05));
    QTest::mouseMove(plot, at(0.3));
    view.setRuns(runs);  // runs land mid-drag
    const int lrNow = axisNamed(plot->spec(), "training.learning_rate");
    QTest::mouseMove(plot, at(0.6));
    QTest::mouseMove(plot, at(0.95));
    QTest::mouseRelease(plot, Qt::LeftButton, {}, at(0.95));
    QCOMPARE(plot->spec().brushes.size(), size_t(1));
    const auto& b = plot->spec().brushes.front();
    QCOMPARE(b.axis, lrNow);
    const auto& axis = plot->spec().axes[size_t(lrNow)];
    QVERIFY2(plots::axisFraction(axis, b.high) - plots::axisFraction(axis, b.low) > 0.8,
             qPrintable(QStringLiteral("%1..%2").arg(b.low).arg(b.high)));
}

// Found under Xvfb (issue 73's walk): the Axes button pops its menu on press; a menu taller
// than the room below opens over the button, and the release of that one click unticked the
// item under the pointer. A release without a press in the menu ticks nothing.
void TstHParams::openingTheAxesMenuTicksNothing()
{
    ui::HParamsView view;
    view.setRuns(syntheticRuns(21));
    view.show();
    QMenu* menu = axesMenu(view, true);
    QVERIFY(menu);
    QAction* on = firstAxis(menu, true);  // a drawn column
    QVERIFY(on);
    QTest::mouseRelease(menu, Qt::LeftButton, {}, menu->actionGeometry(on).center());
    QVERIFY(on->isChecked());
    menu->close();
}

// Issue 70, defect 1: axes chosen in the Axes menu, and a brush, dropped for good when the Runs
// filter narrowed the runs to one (no key varies: the axes are not drawn), and not restored when
// it was cleared.
void TstHParams::chosenAxesAndBrushesOutliveANarrowedList()
{
    const auto runs = syntheticRuns(21);
    ui::HParamsView view;
    view.setRuns(runs);
    QMenu* menu = axesMenu(view, false);
    QVERIFY(menu);
    auto tick = [&](const QString& name, bool on) {
        for (auto* a : menu->actions())
            if (a->text() == name) {
                a->setChecked(on);
                return true;
            }
        return false;
    };
    QVERIFY(tick("model.num_hidden_layers", false));
    QVERIFY(tick("training.seed", true));
    auto axes = [&] {
        std::vector<std::string> names;
        for (const auto& a : view.plot()->spec().axes)
            names.push_back(a.name);
        return names;
    };
    const auto chosen = axes();
    QVERIFY(std::count(chosen.begin(), chosen.end(), "training.seed") == 1);
    QVERIFY(std::count(chosen.begin(), chosen.end(), "model.num_hidden_layers") == 0);
    const int lr = axisNamed(view.plot()->spec(), "training.learning_rate");
    QVERIFY(lr >= 0);
    view.plot()->setBrush(lr, 1e-5, 1e-4);
    const auto inside = view.insideRuns();
    QVERIFY(!inside.isEmpty() && inside.size() < 21);

    view.setRuns({runs[1]});  // the filter narrows to one run: no key varies
    QVERIFY(axisNamed(view.plot()->spec(), "training.learning_rate") < 0);
    view.setRuns(runs);  // and is cleared
    QCOMPARE(axes(), chosen);
    const int back = axisNamed(view.plot()->spec(), "training.learning_rate");
    QCOMPARE(view.plot()->spec().brushes.size(), size_t(1));
    QCOMPARE(view.plot()->spec().brushes[0].axis, back);
    QCOMPARE(view.insideRuns(), inside);
    // Clear brushes clears the kept ones too.
    view.setRuns({runs[1]});
    for (auto* b : view.findChildren<QPushButton*>())
        if (b->text() == "Clear brushes")
            b->click();
    view.setRuns(runs);
    QVERIFY(view.plot()->spec().brushes.empty());
}

void TstHParams::exportsEveryFormatWithProvenance()
{
    ui::HParamsView view;
    view.setRuns(syntheticRuns(30));
    view.plot()->setBrush(axisNamed(view.plot()->spec(), "pe"), 1.8, 2.2);  // rope only
    const int inside = view.plot()->insideCount();
    QCOMPARE(inside, 10);
    QTemporaryDir dir;
    for (const char* ext : {"png", "svg", "pdf", "csv", "tex"}) {
        const QString path = dir.filePath(QStringLiteral("hp.") + ext);
        QString error;
        QVERIFY2(view.exportTo(path, 100, &error), qPrintable(error));
        QVERIFY2(QFileInfo(path).size() > 100, ext);
    }
    QCOMPARE(QImage(dir.filePath("hp.png")).size(), QSize(900, 450));  // 9 x 4.5 in at 100 dpi
    QFile csv(dir.filePath("hp.csv"));
    QVERIFY(csv.open(QIODevice::ReadOnly));
    const auto lines = QString::fromUtf8(csv.readAll()).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 31);
    QVERIFY(lines[0].startsWith("run,") && lines[0].endsWith(",inside"));
    QCOMPARE(int(std::count_if(lines.begin() + 1, lines.end(),
                               [](const QString& l) { return l.endsWith(",1"); })),
             inside);
    QFile prov(dir.filePath("hp.provenance.json"));
    QVERIFY(prov.open(QIODevice::ReadOnly));
    const auto p = QJsonDocument::fromJson(prov.readAll()).object();
    QCOMPARE(p["view"].toObject()["figure"].toString(), QString("hparams"));
    QCOMPARE(p["runs"].toArray().size(), 30);
    const auto brushes = p["view"].toObject()["brushes"].toArray();
    QCOMPARE(brushes.size(), 1);
    QCOMPARE(brushes[0].toObject()["column"].toString(), QString("pe"));
    int marked = 0;
    for (const auto& r : p["runs"].toArray())
        marked += r.toObject()["inside_brushes"].toBool();
    QCOMPARE(marked, inside);
    // The pgfplots export compiles, standalone, with the brush and the colour scale.
    if (test::latexMissing().isEmpty()) {
        auto spec = view.plot()->spec();
        spec.title = figures::hparamsTitle(spec);
        const QString tex = dir.filePath("standalone.tex");
        QVERIFY(plots::exportParallel(spec, tex, plots::Format::Tex, 100, true).ok);
        const auto failed = test::compileLatex(tex);
        QVERIFY2(failed.isEmpty(), qPrintable(failed));
        QFile t(tex);
        QVERIFY(t.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(t.readAll());
        QVERIFY(text.contains("fill=lengenBrush") && text.contains("\\fill[lengenV7]"));
        // Coloured by a category (the encoding): a swatch and name per category, compiled too.
        spec.colorAxis = axisNamed(spec, "pe");
        const QString byPe = dir.filePath("by_pe.tex");
        QVERIFY(plots::exportParallel(spec, byPe, plots::Format::Tex, 100, true).ok);
        const auto failedPe = test::compileLatex(byPe);
        QVERIFY2(failedPe.isEmpty(), qPrintable(failedPe));
    } else {
        QVERIFY2(!test::latexRequired(), qPrintable(test::latexMissing()));
    }
    // These runs exist nowhere: `lengen export --from` names the first one missing (exit 3).
    const auto from = test::runLengen({"export", "--from", dir.filePath("hp.provenance.json")});
    QCOMPARE(from.code, 3);
    QVERIFY2(from.err.contains("run r0 is no longer at /runs/r0/run.h5"), qPrintable(from.err));
    // Issue 71, item 1: a path that is not a run — a folder, a FIFO, the provenance file itself —
    // is refused naming the entry, exit 3 (it was drawn as an anonymous "damaged" row, exit 0).
    const QString fifo = dir.filePath("fifo");
    QCOMPARE(::mkfifo(fifo.toLocal8Bit().constData(), 0600), 0);
    for (const auto& [target, why] : std::vector<std::pair<QString, QString>>{
             {dir.path(), "is not a regular file"},
             {fifo, "is not a regular file"},
             {dir.filePath("hp.provenance.json"), "is not a LenGen run"}}) {
        auto doc = p;
        auto list = doc["runs"].toArray();
        auto first = list[0].toObject();
        first["path"] = target;
        list[0] = first;
        doc["runs"] = list;
        const QString edited = dir.filePath("edited.provenance.json");
        QFile out(edited);
        QVERIFY(out.open(QIODevice::WriteOnly | QIODevice::Truncate));
        out.write(QJsonDocument(doc).toJson());
        out.close();
        const auto r = test::runLengen({"export", "--from", edited}, 30000);
        QCOMPARE(r.code, 3);
        QVERIFY2(r.err.contains("runs[0] (run r0)") && r.err.contains(why), qPrintable(r.err));
    }
}

void TstHParams::brushesSelectInTheRunsListAndGoToCompare()
{
    const std::string dir = test::scratchDir("hparams_studio");
    std::vector<std::string> runs = {test::trainTiny(dir, "rope", 3, 10),
                                     test::trainTiny(dir, "nope", 3, 10),
                                     test::trainTiny(dir, "rope", 4, 10)};
    studio::MainWindow window(test::studioOptions(QString::fromStdString(dir)));
    window.resize(1400, 900);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QTRY_COMPARE(window.runBrowser()->visibleRows(), 3);
    auto* hp = window.hparamsView();
    window.tabs()->setCurrentWidget(hp);  // shown: it reads the Runs list's rows
    QTRY_COMPARE(hp->table().rows.size(), size_t(3));
    const int pe = axisNamed(hp->plot()->spec(), "pe");
    QVERIFY(pe >= 0);
    hp->plot()->setBrush(pe, 0.5, 1.5);  // categories nope, rope: rope is 1
    QStringList ropes = {QString::fromStdString(runs[0]), QString::fromStdString(runs[2])};
    QStringList inside = hp->insideRuns();
    std::sort(inside.begin(), inside.end());
    std::sort(ropes.begin(), ropes.end());
    QCOMPARE(inside, ropes);
    QStringList selected = window.runBrowser()->selectedRuns();
    std::sort(selected.begin(), selected.end());
    QCOMPARE(selected, ropes);
    const auto compare = hp->findChildren<QPushButton*>();
    QPushButton* button = nullptr;
    for (auto* b : compare)
        if (b->text().startsWith("Compare"))
            button = b;
    QVERIFY(button);
    QCOMPARE(button->text(), QString("Compare 2 runs"));
    // Exported as shown, then redrawn from its provenance by `lengen export --from`: the same
    // runs read again, the same axes and brush, the same data byte for byte.
    QTemporaryDir out;
    for (const char* ext : {"csv", "tex"})
        QVERIFY(hp->exportTo(out.filePath(QStringLiteral("hp.") + ext), 100));
    const auto from =
        test::runLengen({"export", "--from", out.filePath("hp.provenance.json"), "--format", "csv",
                         "--format", "tex", "--out", out.filePath("again")});
    QVERIFY2(from.code == 0, qPrintable(from.err));
    auto bytes = [&](const QString& name) {
        QFile f(out.filePath(name));
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("(missing)");
    };
    QCOMPARE(bytes("again.csv"), bytes("hp.csv"));
    QVERIFY(bytes("hp.csv").contains(",1\n") && bytes("hp.csv").contains(",0\n"));
    const auto dats = QDir(out.path()).entryList({"hp-*.dat"});
    QVERIFY(dats.contains("hp-outside.dat"));  // the run outside the brush, in grey
    for (const auto& dat : dats)
        QCOMPARE(bytes(QString(dat).replace("hp-", "again-")), bytes(dat));
    QVERIFY(bytes("again.tex").contains("2 of 3 runs inside the brushes"));
    QTest::mouseClick(button, Qt::LeftButton);
    QCOMPARE(window.tabs()->currentWidget(), static_cast<QWidget*>(window.compareView()));
    QStringList compared = window.compareView()->runs();
    std::sort(compared.begin(), compared.end());
    QCOMPARE(compared, ropes);
    // The tab shows the runs the Runs list shows: its filter too.
    window.tabs()->setCurrentWidget(hp);
    window.runBrowser()->setFilterText("pe=nope");
    QTRY_COMPARE(hp->table().rows.size(), size_t(1));
    QCOMPARE(hp->summaryText(), QString("1 run; drag along an axis to brush it"));
    window.runBrowser()->setFilterText("pe=xpos");
    QTRY_VERIFY(hp->summaryText().startsWith("No runs shown"));
}

QTEST_MAIN(TstHParams)
#include "tst_hparams.moc"
