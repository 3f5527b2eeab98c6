// The Runs list's and `lengen runs --where`'s filter terms (run_index.h, RunFilterTerm; issue
// 70, defect 10): comparisons, ranges, numbers compared as numbers, results as keys, and a word
// that cannot be a term said as such.

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <set>

#include "lengen/engine/run_index.h"
#include "lengen/engine/run_table.h"

namespace lengen::engine {

namespace {

std::string folded(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    return s;
}

// The whole of `text` as a finite number.
std::optional<double> filterNumber(const std::string& text)
{
    if (text.empty() || std::isspace(static_cast<unsigned char>(text.front())))
        return std::nullopt;
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(v))
        return std::nullopt;
    return v;
}

// Levenshtein distance, two rows.
std::size_t editDistance(const std::string& a, const std::string& b)
{
    std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j)
        prev[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j)
            cur[j] = std::min(
                {prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

const std::vector<std::string>& columnNames()
{
    static const std::vector<std::string> names{
        "pe",    "task",        "backbone",    "status",     "seed",
        "id",    "run_id",      "tag",         "final_loss", "min_loss",
        "steps", "total_steps", "steps_per_s", "wall_s",     "sweep"};
    return names;
}

// A result or count of the run, as a number (NaN where it has none).
std::optional<double> resultValue(const RunIndexEntry& run, const std::string& key)
{
    if (key == "final_loss")  // 0 until a step is logged: no loss yet
        return run.steps > 0 ? run.info.lastLoss : kNoValue;
    if (key == "min_loss")
        return run.info.minLoss;
    if (key == "steps")
        return double(run.steps);
    if (key == "total_steps")
        return double(run.info.totalSteps);
    if (key == "steps_per_s")
        return run.info.meanStepsPerSecond;
    if (key == "wall_s")
        return run.info.lastWallSeconds;
    if (key == "seed")  // the seed it trained with, not the config's; -1: none known
        return run.seed >= 0 ? double(run.seed) : kNoValue;
    if (isMethodColumn(key))  // a stored evaluation's (issue 72): the Runs list's same column
        return runCell(run, key).value;
    return std::nullopt;
}

bool compare(double have, RunFilterTerm::Op op, double want, double high)
{
    using Op = RunFilterTerm::Op;
    switch (op) {
    case Op::Eq: return have == want;
    case Op::Ne: return have != want;
    case Op::Lt: return have < want;
    case Op::Le: return have <= want;
    case Op::Gt: return have > want;
    case Op::Ge: return have >= want;
    case Op::Range: return have >= want && have <= high;
    }
    return false;
}

// How long the key at the start of `word` is: letters, digits, '_', '.', '-', and '@', '+',
// ':' of a method's result column (ood_length@longest, ood_length+yarn@train).
std::size_t keyLength(const std::string& word)
{
    std::size_t k = 0;
    while (k < word.size() && (std::isalnum(static_cast<unsigned char>(word[k])) ||
                               (word[k] != '\0' && std::strchr("_.-@+:", word[k]) != nullptr)))
        ++k;
    return k;
}

using FilterOp = std::pair<const char*, RunFilterTerm::Op>;

// The operator at `at` in `word`, the longest first (<= before <).
std::optional<FilterOp> operatorAt(const std::string& word, std::size_t at)
{
    using Op = RunFilterTerm::Op;
    static const FilterOp ops[] = {{"!=", Op::Ne}, {"<=", Op::Le}, {">=", Op::Ge},
                                   {"=", Op::Eq},  {"<", Op::Lt},  {">", Op::Gt}};
    for (const auto& op : ops)
        if (word.compare(at, std::strlen(op.first), op.first) == 0)
            return op;
    return std::nullopt;
}

// The filter's words, split at spaces, with the spaces around an operator taken out: "min_loss
// < 1.2", "min_loss <1.2" and "min_loss< 1.2" are the term min_loss<1.2 (issue 80, defect 21:
// unambiguous, yet read as two words of text and a term without a key).
std::vector<std::string> filterWords(const std::string& filter)
{
    std::vector<std::string> words;
    bool joinNext = false;  // the last word ends in its operator: the value follows
    for (std::size_t at = 0; at < filter.size();) {
        const auto end = std::min(filter.find_first_of(" \t", at), filter.size());
        std::string word = filter.substr(at, end - at);
        at = end + 1;
        if (word.empty())
            continue;
        const bool opFirst = operatorAt(word, 0).has_value();
        const bool term = operatorAt(word, keyLength(word)).has_value();  // "sweep= pe=rope"
        const bool afterKey = !words.empty() && keyLength(words.back()) == words.back().size();
        if ((joinNext && !term) || (opFirst && afterKey))
            words.back() += word;
        else
            words.push_back(std::move(word));
        const auto& last = words.back();
        const auto k = keyLength(last);
        const auto op = operatorAt(last, k);
        joinNext = k > 0 && op && k + std::strlen(op->first) == last.size();
    }
    return words;
}

}  // namespace

ParsedFilterWord parseFilterWord(const std::string& word)
{
    using Op = RunFilterTerm::Op;
    const std::size_t k = keyLength(word);
    ParsedFilterWord out;
    const auto op = operatorAt(word, k);
    if (!op)
        return out;  // plain text
    const auto& [symbol, opCode] = *op;
    const std::string key = word.substr(0, k), value = word.substr(k + std::strlen(symbol));
    if (key.empty()) {
        out.error = "'" + word + "': a filter term starts with a key (pe=rope, final_loss<2)";
        return out;
    }
    if (value.empty()) {
        out.error = "'" + word + "': no value after " + symbol;
        return out;
    }
    RunFilterTerm t{key, opCode, value, {}, word};
    if (const auto dots = value.find(".."); opCode == Op::Eq && dots != std::string::npos) {
        // A range where both ends are numbers; one number and a word is a range gone
        // wrong; no number at all is text (data.path=../x).
        const auto low = value.substr(0, dots), high = value.substr(dots + 2);
        const bool lowNumber = filterNumber(low).has_value();
        const bool highNumber = filterNumber(high).has_value();
        if (lowNumber && highNumber) {
            t.op = Op::Range;
            t.value = low;
            t.high = high;
        } else if (lowNumber || highNumber) {
            out.error = "'" + word + "': a range takes two numbers (key=low..high)";
            return out;
        }
    } else if (opCode != Op::Eq && opCode != Op::Ne && !filterNumber(value)) {
        out.error = "'" + word + "': " + symbol + " compares with a number, not '" + value + "'";
        return out;
    }
    out.term = std::move(t);
    return out;
}

ParsedFilter parseFilter(const std::string& filter)
{
    ParsedFilter out;
    for (const auto& word : filterWords(filter)) {
        auto parsed = parseFilterWord(word);
        if (parsed.term)
            out.terms.push_back(std::move(*parsed.term));
        else if (!parsed.error.empty())
            out.errors.push_back(std::move(parsed.error));
        else
            out.text += (out.text.empty() ? "" : " ") + word;
    }
    return out;
}

bool runHasText(const RunIndexEntry& run, const std::string& text)
{
    if (text.empty())
        return true;
    const std::string wanted = folded(text);
    std::string tags;
    for (const auto& t : run.info.tags)
        tags += (tags.empty() ? "" : ", ") + t;
    const std::string created = createdText(run);
    const auto& i = run.info;
    const std::string* known[] = {&i.runId,    &i.task,  &i.positionEncoding,
                                  &i.backbone, &created, &i.sweepName,
                                  &tags,       &i.notes, &run.path};
    for (const std::string* k : known)
        if (folded(*k).find(wanted) != std::string::npos)
            return true;
    return folded(statusLabel(run.info.status)).find(wanted) != std::string::npos;
}

bool runMatches(const RunIndexEntry& run, const RunFilterTerm& term)
{
    using Op = RunFilterTerm::Op;
    const std::string& key = term.key;
    // A run that could not be read (status "damaged") has no value but its status: it is in no
    // other term, != included (its steps 0 and pe "" are no values of the run).
    if (isDamaged(run) && key != "status")
        return false;
    if (key == "tag") {  // any of its tags
        const bool any =
            std::any_of(run.info.tags.begin(), run.info.tags.end(),
                        [&](const std::string& t) { return folded(t) == folded(term.value); });
        return term.op == Op::Ne ? !any : term.op == Op::Eq && any;
    }
    std::optional<double> have = resultValue(run, key);
    if (have && !std::isfinite(*have))
        return false;  // a result or seed the run lacks matches nothing, != included
    std::optional<std::string> text;
    if (!have) {
        text = runValue(run, key);
        if (!text)
            return false;  // a key the run lacks matches nothing, != included
        // Names compare as text: a run id "0e123456" is not the number 0.
        static const std::set<std::string> names{"pe", "task",   "backbone", "status",
                                                 "id", "run_id", "sweep"};
        if (!names.count(key))
            have = filterNumber(*text);
    }
    const auto want = filterNumber(term.value);
    if (have && want && std::isfinite(*have))
        return compare(*have, term.op, *want, term.op == Op::Range ? *filterNumber(term.high) : 0);
    if (term.op != Op::Eq && term.op != Op::Ne)
        return false;  // an order needs numbers on both sides
    // Text against the run's value: a result's number is never a word (seed!=abc, and
    // final_loss!=1e999, beyond any double, keep every run that has the result).
    bool equal = text && folded(*text) == folded(term.value);
    if (key == "status" && !equal)  // the file's word too ("cancelled")
        equal = folded(run.info.status) == folded(term.value);
    return term.op == Op::Eq ? equal : !equal;
}

bool runMatches(const RunIndexEntry& run, const std::string& key, const std::string& value)
{
    return runMatches(run, RunFilterTerm{key, RunFilterTerm::Op::Eq, value, {}, key + "=" + value});
}

std::string closestName(const std::string& word, const std::vector<std::string>& candidates)
{
    std::string best;
    std::size_t bestDistance = std::max<std::size_t>(3, word.size() / 4) + 1;  // a few edits
    for (const auto& c : candidates)
        if (const auto d = editDistance(word, c); d < bestDistance) {
            bestDistance = d;
            best = c;
        }
    return best;
}

std::string filterKeyProblem(const std::vector<const RunIndexEntry*>& runs, const std::string& key)
{
    const auto& columns = columnNames();
    if (std::find(columns.begin(), columns.end(), key) != columns.end())
        return "";
    if (isMethodColumn(key)) {  // a stored method's column: some run has that evaluation
        const auto method = key.substr(0, key.rfind('@'));
        for (const auto* r : runs)
            for (const auto& m : r->results)
                if (m.name == method)
                    return "";
    }
    std::set<std::string> keys;
    for (const auto* r : runs) {
        if (r->config.count(key))
            return "";
        for (const auto& [k, v] : r->config)
            keys.insert(k);
    }
    for (const auto* r : runs)  // each stored method's two columns, as candidates
        for (const auto& m : r->results) {
            keys.insert(m.name + "@train");
            keys.insert(m.name + "@longest");
        }
    // Columns first: at equal distance "pee" is pe, not seed.
    std::vector<std::string> candidates(columns.begin(), columns.end());
    candidates.insert(candidates.end(), keys.begin(), keys.end());
    const auto best = closestName(key, candidates);
    return "no run has the key " + key +
           (best.empty() ? std::string() : "; did you mean " + best + "?");
}

}  // namespace lengen::engine
