// Runs as a table of settings and results (issue 55), checked by hand on small runs: the keys
// that vary (and only those), each result column against the run's own log and stored
// evaluation, a run with no evaluation (empty cells and null, never 0), the index's round
// trip, `lengen sweep table` on a sweep whose cells have not started, and the index beside a
// folder of runs (read once, refreshed, rebuilt when lost).

#include <QDir>
#include <QFile>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "lengen/engine/analysis.h"
#include "lengen/engine/config.h"
#include "lengen/engine/encodings.h"
#include "lengen/engine/run_file.h"
#include "lengen/engine/run_index.h"
#include "lengen/engine/run_table.h"
#include "lengen/engine/sweep.h"
#include "lengen/engine/sweep_run.h"
#include "test_support.h"

using namespace lengen;
using namespace lengen::engine;

namespace {

int column(const engine::RunTable& t, const std::string& name)
{
    for (std::size_t c = 0; c < t.columns.size(); ++c)
        if (t.columns[c].name == name)
            return int(c);
    return -1;
}

}  // namespace

class TestRunTable final : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void variedKeysAreTheOnesThatDiffer();
    void resultsAreTheRunsOwn();
    void sweepTableListsCellsNotStarted();
    void keysAnEncodingDoesNotReadAreEmpty();
    void autoLeavesOutAKeyNoRunHas();
    void theLabelAndMarkdownKeepTheirCells();
    void runsCommandSaysWhatARunLacks();
    void runIndexCachesAndRebuilds();
    void everyRunFieldReachesTheIndex();
};

void TestRunTable::variedKeysAreTheOnesThatDiffer()
{
    const std::map<std::string, std::string> a{{"lr", "0.001"}, {"layers", "2"}, {"x", "1"}};
    const std::map<std::string, std::string> b{{"lr", "0.003"}, {"layers", "2"}, {"x", "1"}};
    const std::map<std::string, std::string> c{{"lr", "0.001"}, {"layers", "2"}};  // no x
    QCOMPARE(engine::variedKeys({&a, &b}), (std::vector<std::string>{"lr"}));
    QCOMPARE(engine::variedKeys({&a, &b, &c}), (std::vector<std::string>{"lr", "x"}));
    QCOMPARE(engine::variedKeys({&a, &a}), std::vector<std::string>{});
    QCOMPARE(engine::variedKeys({}), std::vector<std::string>{});
}

void TestRunTable::resultsAreTheRunsOwn()
{
    const auto dir = test::scratchDir("run-table");
    const auto rope = test::trainTiny(dir + "/a", "rope", 4, 24);
    const auto nope = test::trainTiny(dir + "/b", "nope", 5, 24);
    test::evaluateSmall(rope, {"ood_length"}, 8);
    for (int pass = 0; pass < 2; ++pass) {  // read from the files, then from the index
        engine::RunIndexStats stats;
        auto runs = engine::indexRuns(dir, &stats);
        QCOMPARE(runs.size(), size_t(2));
        QCOMPARE(stats.fromIndex, size_t(pass == 0 ? 0 : 2));
        std::sort(runs.begin(), runs.end(), [](const auto& x, const auto& y) {
            return x.path < y.path;  // a (RoPE) first
        });
        const auto t = engine::runTable(runs, {"rope", "nope"}, {});
        // Encoding and seed vary (and the keys only NoPE's patch writes); the size does not.
        QVERIFY(column(t, "pe") > 0 && column(t, "seed") > 0);
        QCOMPARE(column(t, "model.hidden_size"), -1);
        QCOMPARE(t.rows[0][size_t(column(t, "seed"))].text, std::string("4"));
        // The log by hand: last, least, mean steps/s, last wall clock.
        const auto log = engine::readTrainLog(rope);
        const auto& row = t.rows[0];
        QCOMPARE(row[size_t(column(t, "final_loss"))].value, log.loss.back());
        QCOMPARE(row[size_t(column(t, "min_loss"))].value,
                 *std::min_element(log.loss.begin(), log.loss.end()));
        double sum = 0;
        int measured = 0;  // rows that timed their steps (a first row may say 0)
        for (double r : log.stepsPerSecond)
            if (std::isfinite(r) && r > 0)
                sum += r, ++measured;
        QVERIFY(measured > 0);
        QVERIFY(std::fabs(row[size_t(column(t, "steps_per_s"))].value - sum / measured) <
                1e-9 * sum);
        QCOMPARE(row[size_t(column(t, "wall_s"))].value, log.wallSeconds.back());
        // The evaluation by hand: the model's curve at the trained length and at the end.
        const auto ev = engine::readEvaluations(rope).at(0);
        const auto& mean = ev.curves.at(0).stats.mean;
        const int last = int(mean.size()) - 1;
        const int train = engine::trainingPosition(ev.trainedPoints, ev.trainPoints, last);
        QVERIFY(train > 0 && train < last);
        QCOMPARE(row[size_t(column(t, "ood_length@train"))].value, mean[size_t(train)]);
        QCOMPARE(row[size_t(column(t, "ood_length@longest"))].value, mean.back());
        // NoPE has no evaluation: empty, NaN, null; never 0.
        const auto& other = t.rows[1];
        QVERIFY(other[size_t(column(t, "ood_length@train"))].text.empty());
        QVERIFY(std::isnan(other[size_t(column(t, "ood_length@longest"))].value));
        const auto json = engine::formatRunTable(t, engine::TableFormat::Json);
        QVERIFY2(json.find("\"ood_length@train\": null") != std::string::npos, json.c_str());
        // In CSV NoPE's row ends in its two empty evaluation cells; RoPE's in numbers.
        const auto csv = QString::fromStdString(engine::formatRunTable(t, engine::TableFormat::Csv))
                             .trimmed()
                             .split('\n');
        QCOMPARE(csv.size(), 3);
        QVERIFY2(csv[2].startsWith("nope,") && csv[2].endsWith(",,"), qPrintable(csv[2]));
        QVERIFY2(!csv[1].endsWith(","), qPrintable(csv[1]));
        // Results asked for as keys (--columns min_loss,ood_length@longest) are the results'
        // own columns, once and filled (issue 72: an empty key column of each came first).
        const auto asked =
            engine::runTable(runs, {"rope", "nope"}, {"pe", "min_loss", "ood_length@longest"});
        int named = 0;
        for (const auto& c : asked.columns)
            named += c.name == "min_loss" || c.name == "ood_length@longest";
        QCOMPARE(named, 2);
        QCOMPARE(asked.columns[1].name, std::string("pe"));
        QCOMPARE(asked.rows[0][size_t(column(asked, "min_loss"))].value,
                 row[size_t(column(t, "min_loss"))].value);
    }
    Q_UNUSED(nope);
}

// Issue 70, defect 15: a key its encoding does not read showed the raw value in the runs table
// ("patch.rope_scaling.factor 11.555555555555555" for NoPE and ALiBi), in the Hyperparameters
// tab and `lengen runs --format md`; it is empty, as Compare's table leaves it.
void TestRunTable::keysAnEncodingDoesNotReadAreEmpty()
{
    const auto* yarn = engine::findEncoding("yarn");
    QVERIFY(yarn);
    std::string key;  // a key YaRN's row reads that NoPE's does not
    for (const auto& k : yarn->keys)
        if (k.rfind("patch.", 0) == 0 && key.empty())
            key = k;
    QVERIFY(!key.empty());
    auto entry = [&](const std::string& pe, const std::string& factor) {
        engine::RunIndexEntry e;
        e.info.runId = pe;
        e.info.positionEncoding = pe;  // as run files name it: the display name
        e.config[key] = factor;
        e.config["training.seed"] = pe == "NoPE" ? "1" : "2";
        return e;
    };
    const auto t = engine::runTable(
        {entry(yarn->display, "8"), entry("NoPE", "11.555555555555555")}, {"yarn", "nope"}, {key});
    const int c = column(t, key);
    QVERIFY(c > 0);
    QCOMPARE(t.rows[0][size_t(c)].text, std::string("8"));
    QCOMPARE(t.rows[0][size_t(c)].value, 8.0);
    QVERIFY(t.rows[1][size_t(c)].text.empty());  // NoPE does not read it
    QVERIFY(std::isnan(t.rows[1][size_t(c)].value));
    QVERIFY(!engine::encodingIgnores(*engine::findEncoding("nope"), key).empty());
    QVERIFY(engine::encodingIgnores(*yarn, key).empty());
}

// Issue 80, defect 25: over RoPE, NoPE and ALiBi runs `auto` showed the RoPE scaling factor,
// which varies in their configs but none of them reads: a column empty in every row.
void TestRunTable::autoLeavesOutAKeyNoRunHas()
{
    const std::string key = "patch.rope_scaling.factor";
    QVERIFY(!engine::encodingIgnores(*engine::findEncoding("rope"), key).empty());
    auto entry = [&](const std::string& pe, const std::string& factor, const std::string& seed) {
        engine::RunIndexEntry e;
        e.info.runId = pe;
        e.info.positionEncoding = pe;
        e.config[key] = factor;
        e.config["training.seed"] = seed;
        return e;
    };
    const std::vector<engine::RunIndexEntry> runs{
        entry("RoPE", "11.5", "1"), entry("NoPE", "8", "2"), entry("ALiBi", "4", "3")};
    const auto t = engine::runTable(runs, {"a", "b", "c"}, {});
    QCOMPARE(column(t, key), -1);
    QVERIFY(column(t, "pe") > 0 && column(t, "training.seed") > 0);
    for (const auto& row : t.rows)
        QCOMPARE(row.size(), t.columns.size());
    const auto md = engine::formatRunTable(t, engine::TableFormat::Markdown);
    QVERIFY2(md.find("rope_scaling") == std::string::npos, md.c_str());
    // Asked for by name, it is shown as asked (empty, and named on stderr by lengen runs).
    QVERIFY(column(engine::runTable(runs, {"a", "b", "c"}, {key}), key) > 0);
}

// Issue 81, item 6: `--columns run` added a second, empty "run" column that hid the run id in
// JSON ("run": null); a '|' or a line break in a Markdown cell or key broke the table.
void TestRunTable::theLabelAndMarkdownKeepTheirCells()
{
    engine::RunIndexEntry e;
    e.info.runId = "abc";
    e.info.positionEncoding = "RoPE";
    e.config["odd|key\nx"] = "a|b\nc";
    const auto t = engine::runTable({e}, {"abc"}, {"run", "pe", "odd|key\nx"});
    QCOMPARE(t.columns[0].name, std::string("run"));
    QCOMPARE(column(t, "pe"), 1);
    const auto json = engine::formatRunTable(t, engine::TableFormat::Json);
    QVERIFY2(json.find("\"run\": \"abc\"") != std::string::npos, json.c_str());
    // Integers as written keep every digit in JSON (a double keeps 15-16); others stay numbers.
    e.config["data.seed"] = "12345678901234567890";
    e.config["big"] = "9007199254740993";
    e.config["lr"] = "1e16";
    const auto n = engine::formatRunTable(
        engine::runTable({e}, {"abc"}, {"data.seed", "big", "lr"}), engine::TableFormat::Json);
    QVERIFY2(n.find("\"data.seed\": 12345678901234567890,") != std::string::npos, n.c_str());
    QVERIFY2(n.find("\"big\": 9007199254740993,") != std::string::npos, n.c_str());
    QVERIFY2(n.find("\"lr\": 1e+16") != std::string::npos, n.c_str());
    const auto md = QString::fromStdString(engine::formatRunTable(t, engine::TableFormat::Markdown))
                        .trimmed()
                        .split('\n');
    QCOMPARE(md.size(), 3);  // the header, its rule and one row
    QVERIFY2(md[0].contains("odd\\|key<br>x") && md[2].contains("a\\|b<br>c"),
             qPrintable(md.join('\n')));
    for (const auto& line : md)  // as many cells on each line: the unescaped bars
        QCOMPARE(line.count('|') - line.count("\\|"), md[1].count('|'));
}

// Issue 81, items 5 and 6, from the command line: a run that cannot be read is listed as
// damaged with empty fields (it read "seed -1 … 0/0 … loss 0") and null in JSON, matches no
// --where term but its status; `--where 'steps < 60'` is one term; an empty --columns is a
// usage error (it read the next options as keys); `--columns run` keeps the run's name.
void TestRunTable::runsCommandSaysWhatARunLacks()
{
    const auto dir = test::scratchDir("runs-damaged");
    QDir().mkpath(QString::fromStdString(dir + "/text"));
    QDir().mkpath(QString::fromStdString(dir + "/empty"));
    {
        QFile junk(QString::fromStdString(dir + "/text/run.h5"));
        QVERIFY(junk.open(QIODevice::WriteOnly));
        junk.write("not a run");
        QFile empty(QString::fromStdString(dir + "/empty/run.h5"));
        QVERIFY(empty.open(QIODevice::WriteOnly));
    }
    const QString F = QString::fromStdString(dir);
    auto r = test::runLengen({"runs", F});
    QCOMPARE(r.code, 0);
    const auto lines = r.out.trimmed().split('\n');
    QCOMPARE(lines.size(), 2);
    for (const auto& line : lines)
        QVERIFY2(line.contains("damaged") && !line.contains("seed -1") && !line.contains("0/0") &&
                     !line.contains("loss 0"),
                 qPrintable(line));
    r = test::runLengen({"runs", F, "--json"});
    QCOMPARE(r.out.count("\"seed\":null,"), 2);
    QCOMPARE(r.out.count("\"steps\":null,"), 2);
    QCOMPARE(r.out.count("\"final_loss\":null,"), 2);
    for (const char* where :
         {"steps<60", "steps=0", "steps!=60", "total_steps<1", "pe!=alibi", "steps < 60"}) {
        r = test::runLengen({"runs", F, "--where", where});
        QVERIFY2(r.code == 0 && r.err.startsWith("0 of 2 runs"),
                 qPrintable(where + (": " + r.err)));
    }
    r = test::runLengen({"runs", F, "--where", "status = damaged"});
    QVERIFY2(r.err.startsWith("2 of 2 runs"), qPrintable(r.err));
    for (const QStringList& args :
         {QStringList{"--columns=", "--format", "json"}, QStringList{"--columns", ",", "--json"},
          QStringList{"--columns", ","}, QStringList{"--columns="}}) {
        r = test::runLengen(QStringList{"runs", F} + args);
        QVERIFY2(r.code == 64 && r.err.contains("--columns"),
                 qPrintable(args.join(' ') + ": " + r.err));
    }
    r = test::runLengen({"runs", F, "--columns", "run", "--format", "json"});
    QCOMPARE(r.code, 0);
    QCOMPARE(r.out.count(QString("\"run\": \"%1/").arg(F)), 2);  // named by path: no run id
}

void TestRunTable::sweepTableListsCellsNotStarted()
{
    const auto dir = test::scratchDir("run-table-sweep");
    engine::createSweep(test::tinySweep(dir + "/s", {"rope", "alibi"}, 2, 10));
    const auto r =
        test::runLengen({"sweep", "table", QString::fromStdString(dir + "/s"), "--format", "csv"});
    QCOMPARE(r.code, 0);
    const auto lines = r.out.trimmed().split('\n');
    QCOMPARE(lines.size(), 5);  // header and four cells
    QVERIFY2(lines[0].startsWith("cell,pe,seed,status,steps,final_loss"), qPrintable(lines[0]));
    QVERIFY2(lines[1].startsWith("000-rope-s1,rope,1,pending,,,"), qPrintable(lines[1]));
    QVERIFY2(lines[4].startsWith("003-alibi-s2,alibi,2,pending,"), qPrintable(lines[4]));
}

// Issue 42: the runs under a folder through the index beside them. A second look reads no run
// file; a changed run (new notes) is read again; a deleted or damaged index is rebuilt with the
// same rows; key=value filters reach any config key.
void TestRunTable::runIndexCachesAndRebuilds()
{
    const auto folder = lengen::test::scratchDir("index");
    for (std::uint64_t seed : {1, 2, 3})
        lengen::test::trainTiny(folder, "rope", seed, 10);
    RunIndexStats st;
    auto first = indexRuns(folder, &st);
    QCOMPARE(first.size(), size_t(3));
    QCOMPARE(st.read, size_t(3));
    QVERIFY(st.indexWritten);
    QVERIFY(std::filesystem::exists(runIndexFileFor(folder)));
    auto again = indexRuns(folder, &st);
    QCOMPARE(st.fromIndex, size_t(3));
    QCOMPARE(st.read, size_t(0));
    QVERIFY(!st.indexWritten);
    for (size_t i = 0; i < 3; ++i) {
        QCOMPARE(again[i].path, first[i].path);
        QCOMPARE(again[i].info.runId, first[i].info.runId);
        QCOMPARE(again[i].seed, first[i].seed);
        QCOMPARE(again[i].config, first[i].config);
        QCOMPARE(again[i].info.lastLoss, first[i].info.lastLoss);
    }
    writeRunNotes(first[1].path, {"checked", {"keep"}});
    auto noted = indexRuns(folder, &st);
    QCOMPARE(st.read, size_t(1));
    QCOMPARE(noted[1].info.tags, std::vector<std::string>{"keep"});
    // The index is a cache: deleted or damaged, it is rebuilt and nothing is lost.
    std::filesystem::remove(runIndexFileFor(folder));
    QCOMPARE(indexRuns(folder, &st).size(), size_t(3));
    QCOMPARE(st.read, size_t(3));
    lengen::test::writeFile(
        folder, ".lengen-index.json",
        "{\"format\": \"lengen-run-index\", \"version\": 1, \"runs\": [{\"path\": 7}]}");
    const auto rebuilt = indexRuns(folder, &st);
    QCOMPARE(st.read, size_t(3));
    QCOMPARE(rebuilt[1].info.tags, std::vector<std::string>{"keep"});
    // Filters: a config key, the seed, a tag.
    QVERIFY(runMatches(rebuilt[0], "model.num_hidden_layers", "2"));
    QVERIFY(!runMatches(rebuilt[0], "model.num_hidden_layers", "3"));
    QCOMPARE(std::count_if(rebuilt.begin(), rebuilt.end(),
                           [](const RunIndexEntry& e) { return runMatches(e, "seed", "3"); }),
             std::ptrdiff_t(1));
    QVERIFY(runMatches(rebuilt[1], "tag", "KEEP"));
    QVERIFY(runMatches(rebuilt[0], "pe", "rope"));
    // Issue 53: the Runs list follows through refreshRunIndex, which says what changed since
    // the rows it has: nothing, a run whose notes changed, a new run, a run gone.
    QVERIFY(!refreshRunIndex(folder, rebuilt).any());
    writeRunNotes(rebuilt[2].path, {"again", {}});
    auto changes = refreshRunIndex(folder, rebuilt);
    QCOMPARE(changes.changed.size(), size_t(1));
    QCOMPARE(changes.changed[0].path, rebuilt[2].path);
    QCOMPARE(changes.changed[0].info.notes, std::string("again"));
    QVERIFY(changes.added.empty() && changes.removed.empty());
    auto known = indexRuns(folder, &st);
    QCOMPARE(st.read, size_t(0));  // refreshRunIndex kept the folder's index current
    lengen::test::trainTiny(folder, "rope", 4, 10);
    // A run gone: its row goes.
    std::filesystem::remove_all(std::filesystem::path(rebuilt[0].path).parent_path());
    changes = refreshRunIndex(folder, known);
    QCOMPARE(changes.added.size(), size_t(1));
    QCOMPARE(changes.added[0].seed, std::int64_t(4));
    QCOMPARE(changes.removed, std::vector<std::string>{rebuilt[0].path});
    QVERIFY(changes.changed.empty());
    QCOMPARE(indexRuns(folder, &st).size(), size_t(3));
    // The walk that lists runs also finds what `lengen jobs` looks for, from the same folders.
    QCOMPARE(scanFolder(folder).runFiles.size(), size_t(3));
    QVERIFY(scanFolder(folder).sweeps.empty());
}

QTEST_GUILESS_MAIN(TestRunTable)
#include "tst_run_table.moc"

namespace {

// A field's value as text, to compare and to name in a message (NaN equals NaN here).
std::string fieldText(const RunFileInfo& info, const RunInfoField& field)
{
    return std::visit(
        [&](auto member) {
            const auto& v = info.*member;
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, std::string>) {
                return v;
            } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
                std::string out;
                for (const auto& t : v)
                    out += t + ";";
                return out;
            } else if constexpr (std::is_same_v<T, ReachedCurriculum>) {
                return std::to_string(v.stepsDone) + "/" + std::to_string(v.dims) + "/" +
                       std::to_string(v.points) + "/" + v.source;
            } else if constexpr (std::is_same_v<T, double>) {
                return std::isnan(v) ? std::string("nan") : std::to_string(v);
            } else {
                return std::to_string(v);
            }
        },
        field.member);
}

}  // namespace

// Issue 82 §2: the index holds the run's info whole, through the one list of its fields
// (runInfoFields). `host` was added in three places (the list, the writer, docs/run-format.md)
// and reaches the index with no change there. Every field read from the file comes back from
// the index unchanged; every attribute field is documented; an index that lacks a field's key
// (written before the field) is read again rather than trusted.
void TestRunTable::everyRunFieldReachesTheIndex()
{
    const auto folder = lengen::test::scratchDir("index-fields");
    const auto run = lengen::test::trainTiny(folder, "rope", 4, 10);
    writeRunNotes(run, {"a note", {"x", "y"}});
    const auto file = readRunInfo(run);
    QVERIFY(!file.host.empty());  // the field added: written, and read through the list
    RunIndexStats st;
    const auto read = indexRuns(folder, &st);
    QCOMPARE(st.read, size_t(1));
    const auto cached = indexRuns(folder, &st);
    QCOMPARE(st.fromIndex, size_t(1));
    QFile docFile(QStringLiteral(LENGEN_SOURCE_DIR "/docs/run-format.md"));
    QVERIFY(docFile.open(QIODevice::ReadOnly));
    const QString doc = QString::fromUtf8(docFile.readAll());
    for (const auto& field : runInfoFields()) {
        const auto want = fieldText(file, field);
        QVERIFY2(fieldText(read[0].info, field) == want, field.key);
        QVERIFY2(fieldText(cached[0].info, field) == want, field.key);
        if (field.source != RunInfoField::Summary)
            QVERIFY2(doc.contains(QStringLiteral("`%1`").arg(field.key)), field.key);
    }
    QCOMPARE(cached[0].info.host, file.host);
    // An index written before `host` existed: its entries lack the key, and are read again.
    QFile index(QString::fromStdString(runIndexFileFor(folder)));
    QVERIFY(index.open(QIODevice::ReadOnly));
    QString text = QString::fromUtf8(index.readAll());
    index.close();
    const QString key = QStringLiteral("\"host\":\"%1\",").arg(QString::fromStdString(file.host));
    QVERIFY2(text.contains(key), qPrintable(text.left(400)));
    lengen::test::writeFile(folder, ".lengen-index.json", text.remove(key).toStdString());
    const auto reread = indexRuns(folder, &st);
    QCOMPARE(st.read, size_t(1));
    QCOMPARE(reread[0].info.host, file.host);
}
