// The Runs list's and `lengen runs --where`'s filter terms (engine::parseFilterWord,
// runMatches; issue 70, defect 10): numbers compare as numbers, orders and ranges, results as
// keys, a term that cannot parse says so, and "did you mean" prefers a column.

#include <QtTest>

#include "lengen/engine/run_index.h"

using namespace lengen::engine;

namespace {

RunIndexEntry run(double loss, const std::string& lr, std::int64_t seed = 1)
{
    RunIndexEntry e;
    e.info.runId = "r";
    e.info.positionEncoding = "rope";
    e.info.task = "linear_regression";
    e.info.status = "done";
    e.seed = seed;
    e.steps = 1500;
    e.info.lastLoss = loss;
    e.config["training.learning_rate"] = lr;
    e.config["model.num_hidden_layers"] = "6";
    e.info.tags = {"Keep"};
    return e;
}

bool matches(const RunIndexEntry& r, const std::string& word)
{
    const auto parsed = parseFilterWord(word);
    if (!parsed.term)
        throw std::runtime_error("not a term: " + word + " (" + parsed.error + ")");
    return runMatches(r, *parsed.term);
}

}  // namespace

class TstRunFilter : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void numbersCompareAsNumbers();
    void ordersAndRanges();
    void textAndColumns();
    void termsThatCannotParseSaySo();
    void didYouMeanPrefersAColumn();
    void textValuesAndDamagedRuns();
    void spacesAroundAnOperator();
};

void TstRunFilter::numbersCompareAsNumbers()
{
    const auto r = run(1.5, "0.0001");
    QVERIFY(matches(r, "training.learning_rate=1e-4"));  // was text: no match
    QVERIFY(matches(r, "training.learning_rate=0.0001"));
    QVERIFY(matches(r, "training.learning_rate=1.0e-04"));
    QVERIFY(!matches(r, "training.learning_rate=1e-3"));
    QVERIFY(matches(r, "model.num_hidden_layers=6.0"));
    QVERIFY(matches(r, "training.learning_rate!=1e-3"));
}

void TstRunFilter::ordersAndRanges()
{
    const auto r = run(1.5, "0.0001", 3);
    QVERIFY(matches(r, "final_loss<2"));  // a result: was an empty list
    QVERIFY(!matches(r, "final_loss>2"));
    QVERIFY(matches(r, "final_loss>=1.5"));
    QVERIFY(matches(r, "final_loss<=1.5"));
    QVERIFY(!matches(r, "final_loss<1.5"));
    QVERIFY(matches(r, "training.learning_rate<2e-4"));
    QVERIFY(matches(r, "seed=1..3"));
    QVERIFY(!matches(r, "seed=4..9"));
    QVERIFY(matches(r, "steps>=1000"));
    QVERIFY(matches(r, "final_loss=1..2"));
    // A run without a final loss (never trained) is inside no comparison.
    QVERIFY(!matches(run(std::numeric_limits<double>::quiet_NaN(), "1e-4"), "final_loss<2"));
    // A key the run lacks matches nothing.
    QVERIFY(!matches(r, "patch.rope_theta<1e9"));
    QVERIFY(!matches(r, "patch.rope_theta!=5"));
    // Nor does a seed or loss it lacks (an imported run's seed -1; no step logged yet).
    auto unknown = run(0, "1e-4", -1);
    unknown.steps = 0;
    QVERIFY(!matches(unknown, "seed<10"));
    QVERIFY(!matches(unknown, "seed!=3"));
    QVERIFY(!matches(unknown, "final_loss<1"));
}

void TstRunFilter::textAndColumns()
{
    const auto r = run(1.5, "0.0001");
    QVERIFY(matches(r, "pe=RoPE"));
    QVERIFY(matches(r, "pe!=alibi"));
    QVERIFY(!matches(r, "pe!=rope"));
    QVERIFY(matches(r, "tag=keep"));
    QVERIFY(matches(r, "tag!=other"));
    QVERIFY(!matches(r, "tag!=keep"));
    QVERIFY(matches(r, "status=finished") || matches(r, "status=done"));
    QVERIFY(runMatches(r, "model.num_hidden_layers", "6"));  // the key=value form
    QVERIFY(!parseFilterWord("rope").term);                  // plain text: searched
    QVERIFY(parseFilterWord("rope").error.empty());
    // '..' in a value that is no range is text; ids are names, not numbers.
    auto path = r;
    path.config["data.path"] = "../data/x";
    QVERIFY(matches(path, "data.path=../data/x"));
    auto hex = r;
    hex.info.runId = "0e123456";
    QVERIFY(!matches(hex, "id=0"));
    QVERIFY(matches(hex, "id=0E123456"));
    // A sweep's runs by its name (issue 72); a run of no sweep is in none.
    auto cell = r;
    cell.info.sweepName = "quick-pe";
    QVERIFY(matches(cell, "sweep=Quick-PE"));
    QVERIFY(!matches(r, "sweep=quick-pe"));
    QVERIFY(matches(r, "sweep!=quick-pe"));
    QVERIFY(filterKeyProblem({&r}, "sweep").empty());  // a column, even where no run has one
    // A stored evaluation's columns filter as numbers, as the Runs list shows them (issue 72:
    // ood_length@longest>3 matched nothing, and lengen runs refused the word).
    auto evaluated = r;
    evaluated.results.push_back({"ood_length", 10, 79, 4.1, 3.0});
    QVERIFY(matches(evaluated, "ood_length@longest<3.05"));
    QVERIFY(!matches(evaluated, "ood_length@train<4"));
    QVERIFY(matches(evaluated, "ood_length@train=4..5"));
    QVERIFY(!matches(r, "ood_length@longest<3.05"));  // not evaluated: matches nothing
    QVERIFY(!matches(r, "ood_length@longest!=3"));
    QVERIFY(filterKeyProblem({&r, &evaluated}, "ood_length@longest").empty());
    const auto typo = filterKeyProblem({&evaluated}, "ood_lenght@longest");
    QVERIFY2(typo.find("did you mean ood_length@longest?") != std::string::npos, typo.c_str());
}

void TstRunFilter::termsThatCannotParseSaySo()
{
    for (const char* word : {"final_loss<abc", "final_loss<", "seed=1..x", "=rope", "a>=b"}) {
        const auto parsed = parseFilterWord(word);
        QVERIFY2(!parsed.term, word);
        QVERIFY2(!parsed.error.empty(), word);
        QVERIFY2(parsed.error.find(word) != std::string::npos, parsed.error.c_str());
    }
}

void TstRunFilter::didYouMeanPrefersAColumn()
{
    const auto r = run(1.5, "0.0001");
    const std::vector<const RunIndexEntry*> runs{&r};
    QCOMPARE(filterKeyProblem(runs, "pee"),
             std::string("no run has the key pee; did you mean pe?"));
    QCOMPARE(filterKeyProblem(runs, "final_loss"), std::string());
    QCOMPARE(filterKeyProblem(runs, "trainig.learning_rate"),
             std::string("no run has the key trainig.learning_rate; did you mean "
                         "training.learning_rate?"));
}

// Issue 81, item 5: != with a value that is no number keeps every run that has the key (the
// result is a number, never that word: seed!=abc and final_loss!=1e999 kept nothing), and a
// run that could not be read matches no term but its status (steps<60, steps=0, pe!=alibi
// kept it by the zeros and empty names of an entry read from nothing).
void TstRunFilter::textValuesAndDamagedRuns()
{
    const auto r = run(1.5, "0.0001", 3);
    for (const char* word : {"seed!=abc", "seed!=1e999", "final_loss!=1e999", "steps!=abc",
                             "training.learning_rate!=abc"})
        QVERIFY2(matches(r, word), word);
    for (const char* word : {"seed=abc", "final_loss=1e999", "steps=abc"})
        QVERIFY2(!matches(r, word), word);
    RunIndexEntry damaged;  // as readRunEntry leaves a run it cannot read
    damaged.path = "/runs/broken/run.h5";
    damaged.info.task = "broken";
    damaged.info.status = "damaged";
    damaged.error = "not an HDF5 file";
    QVERIFY(isDamaged(damaged) && !isDamaged(r));
    for (const char* word :
         {"steps<60", "steps=0", "steps!=60", "total_steps<1", "pe!=alibi", "seed!=abc",
          "final_loss!=1e999", "task=broken", "tag!=keep", "sweep!=quick-pe", "id!=r",
          "model.num_hidden_layers!=6", "min_loss!=1"})
        QVERIFY2(!matches(damaged, word), word);
    QVERIFY(matches(damaged, "status=damaged"));
    QVERIFY(!matches(damaged, "status!=damaged"));
    QVERIFY(matches(r, "status!=damaged"));
}

// Issue 80, defect 21: "min_loss < 1.2" is one term, however the spaces fall around the
// operator ("'<': a filter term starts with a key" emptied the list before).
void TstRunFilter::spacesAroundAnOperator()
{
    for (const char* typed : {"min_loss < 1.2", "min_loss <1.2", "min_loss< 1.2", "min_loss<1.2",
                              "  min_loss   <   1.2  "}) {
        const auto f = parseFilter(typed);
        QVERIFY2(f.errors.empty() && f.text.empty(), typed);
        QCOMPARE(f.terms.size(), size_t(1));
        QCOMPARE(f.terms[0].key, std::string("min_loss"));
        QVERIFY(f.terms[0].op == RunFilterTerm::Op::Lt);
        QCOMPARE(f.terms[0].value, std::string("1.2"));
    }
    auto f = parseFilter("pe = rope long seed >= 2 training.learning_rate != 1e-3");
    QCOMPARE(f.terms.size(), size_t(3));
    QCOMPARE(f.terms[0].text, std::string("pe=rope"));
    QCOMPARE(f.terms[1].text, std::string("seed>=2"));
    QCOMPARE(f.terms[2].text, std::string("training.learning_rate!=1e-3"));
    QCOMPARE(f.text, std::string("long"));
    QVERIFY(f.errors.empty());
    // What still cannot be a term is said, and only it: the rest of the filter holds.
    f = parseFilter("pe=rope final_loss < abc sweep=");
    QCOMPARE(f.terms.size(), size_t(1));
    QCOMPARE(f.errors.size(), size_t(2));
    QVERIFY2(f.errors[0].find("final_loss<abc") != std::string::npos, f.errors[0].c_str());
    QVERIFY2(f.errors[1].find("sweep=") != std::string::npos, f.errors[1].c_str());
    f = parseFilter("< 2");
    QVERIFY(f.terms.empty() && f.errors.size() == 1);
}

QTEST_APPLESS_MAIN(TstRunFilter)
#include "tst_run_filter.moc"
