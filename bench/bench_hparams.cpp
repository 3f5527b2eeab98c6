// The Hyperparameters tab at N runs (issue 55: 10,000 through the run index, the GUI thread
// under 50 ms a frame): what each step of the view costs on the GUI thread, offscreen.
//   bench_hparams [N=10000] [WIDTH=1400] [HEIGHT=560]
//   bench_hparams --runs FOLDER   (the Runs list's look at a folder's runs, GUI thread or worker)
//   bench_hparams --sort [N=10000] (the Runs list sorted by an extra column, issue 82 §3)
// Prints, in ms, what the GUI thread spends (taking the Runs list's entries, showing a new table,
// each frame of a drag: median and worst, the end of a drag) and what the worker threads spend
// (the runs table, each image).

#include <QApplication>
#include <QElapsedTimer>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include <QSignalSpy>
#include <QSortFilterProxyModel>

#include "hparams_view.h"
#include "parallel_view.h"
#include "run_table_model.h"

using namespace lengen;

namespace {

// A sweep's worth of runs: learning rate, depth, width, encoding, seed; loss and two results.
std::vector<engine::RunIndexEntry> runs(int n)
{
    std::mt19937 rng(5);
    std::uniform_real_distribution<double> u(0, 1);
    const char* pes[] = {"rope", "nope", "alibi", "fire", "yarn", "pi", "dynamic_ntk", "mamba"};
    std::vector<engine::RunIndexEntry> out;
    for (int i = 0; i < n; ++i) {
        engine::RunIndexEntry e;
        e.path = "/sweep/cell" + std::to_string(i) + "/run.h5";
        e.info.runId = "cell" + std::to_string(i);
        e.info.task = i % 2 ? "linear_regression" : "sparse_linear_regression";
        e.info.positionEncoding = pes[i % 8];
        e.info.backbone = "llama";
        e.info.status = "done";
        e.seed = i % 5;
        e.steps = 15000;
        e.info.lastLoss = 0.05 + u(rng);
        e.info.minLoss = e.info.lastLoss * 0.9;
        e.info.meanStepsPerSecond = 40 + 20 * u(rng);
        e.info.lastWallSeconds = 300 + 100 * u(rng);
        for (int k = 0; k < 40; ++k)  // a resolved config's keys, most the same everywhere
            e.config["model.key" + std::to_string(k)] = "value";
        e.config["training.learning_rate"] = std::to_string(1e-5 * std::pow(10.0, 3 * u(rng)));
        e.config["model.num_hidden_layers"] = std::to_string(2 + i % 6);
        e.config["model.hidden_size"] = std::to_string(64 << (i % 3));
        e.config["training.seed"] = std::to_string(i % 5);
        e.results.push_back({"standard", 39, 39, 0.01 + u(rng), 0.01 + u(rng)});
        e.results.push_back({"ood_length", 39, 319, 0.1 + u(rng), 1 + 4 * u(rng)});
        out.push_back(std::move(e));
    }
    return out;
}

double ms(QElapsedTimer& t) { return double(t.nsecsElapsed()) / 1e6; }

// Runs the event loop until the plot's worker delivered the image of the current state.
double waitRendered(ui::ParallelView* plot)
{
    QElapsedTimer t;
    t.start();
    while (!plot->imageCurrent())
        QApplication::processEvents(QEventLoop::WaitForMoreEvents, 5);
    return ms(t);
}

// --runs FOLDER: the Runs list's look at that folder's runs (bench/run_index_bench.sh
// makes 10,000): on the GUI thread (poll) against on a worker (pollInBackground), and listing.
void runsListLook(const QString& folder)
{
    QElapsedTimer t;
    ui::RunTableModel model;
    t.start();
    model.setFolders({folder});
    const double listMs = ms(t);
    t.restart();
    model.poll();
    const double pollMs = ms(t);
    QSignalSpy polled(&model, &ui::RunTableModel::polled);
    model.pollInBackground();  // once first: the GUI thread's own frees above are not its cost
    polled.wait(120000);
    t.restart();
    model.pollInBackground();
    const double startMs = ms(t);
    polled.wait(120000);
    std::printf("Runs list, %d runs under %s\n", model.rowCount(), qPrintable(folder));
    std::printf("  listing (setFolders, GUI thread)    %7.1f ms\n", listMs);
    std::printf("  a look on the GUI thread (poll)     %7.1f ms\n", pollMs);
    std::printf("  a look on a worker: GUI thread      %7.2f ms (the worker %lld ms)\n", startMs,
                polled.isEmpty() ? -1LL : static_cast<long long>(polled.last().at(1).toLongLong()));
}

}  // namespace

// --sort: the Runs list's model over N runs made in memory, sorted as its header sorts (the raw
// value, Qt::UserRole) by an extra config column and an extra result column, each way. Prints
// what choosing the columns and each sort cost the GUI thread, in ms.
void sortByExtraColumn(int n)
{
    ui::RunTableModel model;
    model.showEntries(runs(n));
    QSortFilterProxyModel proxy;
    proxy.setSortRole(Qt::UserRole);
    proxy.setSourceModel(&model);
    QElapsedTimer t;
    t.start();
    model.setExtraColumns({"training.learning_rate", "ood_length@longest"});
    const double chooseMs = ms(t);
    std::printf("runs %d  choose 2 extra columns %.1f ms\n", n, chooseMs);
    for (int c = 0; c < 2; ++c)
        for (auto order : {Qt::AscendingOrder, Qt::DescendingOrder}) {
            t.restart();
            proxy.sort(ui::RunTableModel::ColumnCount + c, order);
            std::printf("sort by %-22s %-4s %7.1f ms\n",
                        model.extraColumns().at(c).toUtf8().constData(),
                        order == Qt::AscendingOrder ? "asc" : "desc", ms(t));
        }
}

int main(int argc, char** argv)
{
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    if (argc > 2 && std::string(argv[1]) == "--runs") {
        runsListLook(QString::fromLocal8Bit(argv[2]));
        return 0;
    }
    if (argc > 1 && std::string(argv[1]) == "--sort") {
        sortByExtraColumn(argc > 2 ? std::atoi(argv[2]) : 10000);
        return 0;
    }
    const int n = argc > 1 ? std::atoi(argv[1]) : 10000;
    const int w = argc > 2 ? std::atoi(argv[2]) : 1400, h = argc > 3 ? std::atoi(argv[3]) : 560;
    std::vector<std::shared_ptr<const engine::RunIndexEntry>> shared;
    for (auto& e : runs(n))
        shared.push_back(std::make_shared<const engine::RunIndexEntry>(std::move(e)));
    QElapsedTimer t;

    // The GUI thread's part of following the Runs list: the shared entries' pointers.
    t.start();
    std::vector<std::shared_ptr<const engine::RunIndexEntry>> pulled = shared;
    const double pullMs = ms(t);
    // The worker's: the runs table and its figure.
    t.restart();
    auto built = ui::HParamsView::build(pulled, ui::HParamsModel{});
    const double buildMs = ms(t);

    ui::HParamsView view;
    view.resize(w, h + 300);
    view.show();
    QApplication::processEvents();
    t.restart();
    view.apply(std::move(built));
    const double applyMs = ms(t);
    auto* plot = view.plot();
    const double firstMs = waitRendered(plot);

    // A drag down the final loss axis: 40 frames. On the GUI thread a frame is the brush change
    // (which runs are inside) and a repaint (the last image and the boxes); the worker draws
    // the image of each state meanwhile, at most one behind.
    int axis = 0;
    for (size_t a = 0; a < plot->spec().axes.size(); ++a)
        if (plot->spec().axes[a].name == "final_loss")
            axis = int(a);
    const auto ax = plot->spec().axes[size_t(axis)];
    std::vector<double> frames, renders;
    for (int f = 1; f <= 40; ++f) {
        t.restart();
        plot->setBrush(axis, ax.min + (ax.max - ax.min) * 0.2,
                       ax.min + (ax.max - ax.min) * (0.2 + 0.02 * f), false);
        plot->repaint();
        frames.push_back(ms(t));
        waitRendered(plot);
        renders.push_back(plot->lastRenderMs());
    }
    t.restart();
    plot->setBrush(axis, ax.min + (ax.max - ax.min) * 0.2, ax.min + (ax.max - ax.min) * 0.6, true);
    const double finishMs = ms(t);
    std::sort(frames.begin(), frames.end());
    std::sort(renders.begin(), renders.end());

    std::printf("hparams view, %d runs, plot %dx%d, %zu axes, %zu table columns\n", n,
                plot->width(), plot->height(), plot->spec().axes.size(),
                view.table().columns.size());
    std::printf("GUI thread:\n");
    std::printf("  entries taken from the Runs list    %7.2f ms\n", pullMs);
    std::printf("  new table shown (model, menus)      %7.1f ms\n", applyMs);
    std::printf("  drag frame, median / worst          %7.2f / %.2f ms\n",
                frames[frames.size() / 2], frames.back());
    std::printf("  end of drag (table of runs inside)  %7.1f ms; %d runs inside\n", finishMs,
                plot->insideCount());
    std::printf("worker threads:\n");
    std::printf("  runs table and figure               %7.1f ms\n", buildMs);
    std::printf("  first image                         %7.1f ms\n", firstMs);
    std::printf("  image per drag frame, median / worst %6.1f / %.1f ms\n",
                renders[renders.size() / 2], renders.back());
    return 0;
}
