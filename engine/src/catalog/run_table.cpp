// runTable: the runs' varied keys and results as rows of cells; formatRunTable writes them.

#include "lengen/engine/run_table.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <map>

#include "lengen/engine/config.h"
#include "lengen/engine/encodings.h"
#include "lengen/engine/run_file.h"

namespace lengen::engine {

namespace {

// The result columns every table has after its keys, in order ("status" is text, the rest
// numbers); then each stored method's "<method>@train" and "<method>@longest".
const char* const kResults[] = {"status",   "steps",       "final_loss",
                                "min_loss", "steps_per_s", "wall_s"};

bool endsWith(const std::string& s, const std::string& tail)
{
    return s.size() > tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

RunTableCell numberCell(double v)
{
    if (!std::isfinite(v))
        return {};
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    return {buf, v};
}

// A config value that reads whole as a number ("0.0003", "6"), NaN otherwise ("rope", "[1, 2]").
double asNumber(const std::string& text)
{
    if (text.empty())
        return kNoValue;
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    return end && *end == '\0' ? v : kNoValue;
}

// The stored evaluations' names over all runs, in the order they first appear.
std::vector<std::string> methodNames(const std::vector<const RunIndexEntry*>& runs)
{
    std::vector<std::string> names;
    for (const auto* r : runs)
        for (const auto& m : r->results)
            if (std::find(names.begin(), names.end(), m.name) == names.end())
                names.push_back(m.name);
    return names;
}

// The encoding row of a listed run (its file names the encoding by display name: RoPE, NoPE).
const EncodingInfo* encodingNamed(const std::string& pe)
{
    if (const auto* e = findEncoding(pe))
        return e;
    for (const auto& e : encodingTable())
        if (e.display == pe)
            return &e;
    return nullptr;
}

// `auto`: the encoding, task and backbone where they vary, then the config keys that vary.
std::vector<std::string> autoKeys(const std::vector<const RunIndexEntry*>& runs)
{
    std::vector<std::string> keys;
    for (const char* k : {"task", "pe", "backbone"})
        for (const auto* r : runs)
            if (runValue(*r, k) != runValue(*runs.front(), k)) {
                keys.push_back(k);
                break;
            }
    std::vector<const std::map<std::string, std::string>*> configs;
    for (const auto* r : runs)
        configs.push_back(&r->config);
    for (auto& k : variedKeys(configs))
        keys.push_back(std::move(k));
    return keys;
}

// `auto` shows what varies among the runs listed: a key that is empty in every row (the RoPE
// scaling factor over RoPE, NoPE and ALiBi runs, which none of them reads) is left out (issue
// 80, defect 25). Columns 1..keyCount are the keys.
void dropEmptyKeyColumns(RunTable& t, std::size_t keyCount)
{
    for (std::size_t c = keyCount; c >= 1; --c) {
        const bool empty = std::all_of(t.rows.begin(), t.rows.end(),
                                       [&](const auto& row) { return row[c].text.empty(); });
        if (!empty)
            continue;
        t.columns.erase(t.columns.begin() + std::ptrdiff_t(c));
        for (auto& row : t.rows)
            row.erase(row.begin() + std::ptrdiff_t(c));
    }
}

// A Markdown table's cell: a '|' would end the cell and a line break the row (issue 81).
std::string markdownCell(const std::string& s)
{
    std::string out;
    for (char c : s)
        out += c == '|'    ? std::string("\\|")
               : c == '\n' ? std::string("<br>")
               : c == '\r' ? std::string()
                           : std::string(1, c);
    return out;
}

}  // namespace

RunTable runTable(const std::vector<RunIndexEntry>& runs, const std::vector<std::string>& labels,
                  const std::vector<std::string>& keys, const std::string& labelColumn)
{
    std::vector<const RunIndexEntry*> pointers;
    for (const auto& r : runs)
        pointers.push_back(&r);
    return runTable(pointers, labels, keys, labelColumn);
}

RunTable runTable(const std::vector<const RunIndexEntry*>& runs,
                  const std::vector<std::string>& labels, const std::vector<std::string>& keys,
                  const std::string& labelColumn)
{
    auto shownKeys = keys.empty() && !runs.empty() ? autoKeys(runs) : keys;
    // A result asked for as a key (--columns min_loss) is in the results already: once, filled;
    // so is the label (--columns run gave a second, empty "run" that hid the run id in JSON).
    shownKeys.erase(
        std::remove_if(shownKeys.begin(), shownKeys.end(),
                       [&](const std::string& k) { return isResultColumn(k) || k == labelColumn; }),
        shownKeys.end());
    const auto methods = methodNames(runs);
    RunTable t;
    t.columns.push_back({labelColumn, RunTableColumn::Label, false});
    for (const auto& k : shownKeys) {
        bool numeric = true;
        for (const auto* r : runs) {
            const auto v = runValue(*r, k).value_or("");
            numeric = numeric && (v.empty() || std::isfinite(asNumber(v)));
        }
        t.columns.push_back({k, RunTableColumn::Key, numeric});
    }
    for (const char* name : kResults)
        t.columns.push_back({name, RunTableColumn::Result, std::string(name) != "status"});
    for (const auto& m : methods) {
        t.columns.push_back({m + "@train", RunTableColumn::Result, true});
        t.columns.push_back({m + "@longest", RunTableColumn::Result, true});
    }
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const auto& r = *runs[i];
        std::vector<RunTableCell> row;
        row.push_back({i < labels.size() ? labels[i] : r.info.runId, kNoValue});
        const auto* encoding = encodingNamed(r.info.positionEncoding);
        for (std::size_t k = 0; k < shownKeys.size(); ++k) {
            // A key its encoding does not read (the YaRN factor of a NoPE run) is left empty,
            // as Compare's table leaves it: a value it never used is no setting of the run.
            if (encoding && !encodingIgnores(*encoding, shownKeys[k]).empty()) {
                row.push_back({std::string(), kNoValue});
                continue;
            }
            const auto text = runValue(r, shownKeys[k]).value_or("");
            row.push_back({text, t.columns[k + 1].numeric ? asNumber(text) : kNoValue});
        }
        // The results as the Runs list's chosen columns show them: one definition, runCell.
        for (std::size_t c = 1 + shownKeys.size(); c < t.columns.size(); ++c)
            row.push_back(runCell(r, t.columns[c].name));
        t.rows.push_back(std::move(row));
    }
    if (keys.empty())
        dropEmptyKeyColumns(t, shownKeys.size());
    return t;
}

RunTableCell runCell(const RunIndexEntry& r, const std::string& column)
{
    const bool trained = r.steps > 0;
    if (column == "status")
        return {r.info.status.empty() ? std::string() : statusLabel(r.info.status), kNoValue};
    if (column == "steps")
        return trained ? numberCell(double(r.steps)) : RunTableCell{};
    if (column == "final_loss")
        return trained ? numberCell(r.info.lastLoss) : RunTableCell{};
    if (column == "min_loss")
        return numberCell(r.info.minLoss);
    if (column == "steps_per_s")
        return numberCell(r.info.meanStepsPerSecond);
    if (column == "wall_s")
        return numberCell(r.info.lastWallSeconds);
    if (isMethodColumn(column)) {
        const bool atTrain = endsWith(column, "@train");
        const auto name = column.substr(0, column.rfind('@'));
        for (const auto& m : r.results)
            if (m.name == name)
                return numberCell(atTrain ? m.atTrain : m.atLast);
        return {};
    }
    const auto text = runValue(r, column).value_or("");
    return textCell(text);
}

RunTableCell textCell(const std::string& text) { return {text, asNumber(text)}; }

std::vector<std::string> runColumnNames(const std::vector<const RunIndexEntry*>& runs)
{
    std::vector<std::string> names(std::begin(kResults), std::end(kResults));
    for (const auto& m : methodNames(runs)) {
        names.push_back(m + "@train");
        names.push_back(m + "@longest");
    }
    std::vector<std::string> keys;
    for (const auto* r : runs)
        for (const auto& [k, v] : r->config)
            keys.push_back(k);
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    names.insert(names.end(), keys.begin(), keys.end());
    return names;
}

const std::vector<RunListColumn>& runListColumns()
{
    static const std::vector<RunListColumn> columns{{"task", "Task"},
                                                    {"pe", "PE"},
                                                    {"backbone", "Backbone"},
                                                    {"seed", "Seed"},
                                                    {"run_id", "Run id"},
                                                    {"size", "Size (H×L×heads)"},
                                                    {"dims", "D"},
                                                    {"points", "Points"},
                                                    {"steps", "Steps"},
                                                    {"final_loss", "Final loss"},
                                                    {"created", "Created (UTC)"},
                                                    {"status", "Status"},
                                                    {"sweep", "Sweep"},
                                                    {"tags", "Tags"},
                                                    {"notes", "Notes"}};
    return columns;
}

std::string runListColumnKey(const std::string& name)
{
    for (const auto& c : runListColumns())
        if (name == c.key || name == c.header)
            return c.key;
    return {};
}

bool isResultColumn(const std::string& name)
{
    return std::find(std::begin(kResults), std::end(kResults), name) != std::end(kResults) ||
           isMethodColumn(name);
}

bool isMethodColumn(const std::string& name)
{
    return endsWith(name, "@train") || endsWith(name, "@longest");
}

std::string shortNumber(double v, const char* nonFinite)
{
    if (!std::isfinite(v))
        return nonFinite;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", v);
    return buf;
}

std::string csvField(const std::string& s)
{
    if (s.find_first_of(",\"\n\r") == std::string::npos)
        return s;
    std::string out = "\"";
    for (char c : s)
        out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

// A numeric cell in JSON: whole numbers as integers (steps, seeds). An integer as written (a
// seed of 20 digits) keeps every digit, which its double does not.
static nlohmann::ordered_json tableJsonNumber(const RunTableCell& cell)
{
    const double v = cell.value;
    if (!std::isfinite(v))
        return nlohmann::ordered_json();
    const auto& t = cell.text;
    const char* end = t.data() + t.size();
    const auto whole = [&](auto& n) {  // all of the text, in range
        const auto r = std::from_chars(t.data(), end, n);
        return !t.empty() && r.ptr == end && r.ec == std::errc();
    };
    std::int64_t i = 0;
    std::uint64_t u = 0;
    if (whole(i))
        return nlohmann::ordered_json(i);
    if (whole(u))
        return nlohmann::ordered_json(u);
    if (v == std::floor(v) && std::fabs(v) < 9e15)
        return nlohmann::ordered_json(static_cast<std::int64_t>(v));
    return nlohmann::ordered_json(v);
}

// The table as a JSON array of objects, columns in the table's order; no value is null.
static std::string runTableJson(const RunTable& table)
{
    const auto& cols = table.columns;
    auto out = nlohmann::ordered_json::array();
    for (const auto& row : table.rows) {
        auto o = nlohmann::ordered_json::object();
        for (std::size_t c = 0; c < cols.size(); ++c) {
            const auto& cell = row[c];
            if (cols[c].numeric)
                o[cols[c].name] = tableJsonNumber(cell);
            else if (!cell.text.empty())
                o[cols[c].name] = cell.text;
            else
                o[cols[c].name] = nullptr;
        }
        out.push_back(std::move(o));
    }
    return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

namespace {
// Layout::Summary's Markdown: cells as they are, the renderer aligns them.
std::string plainMarkdown(const std::vector<RunTableColumn>& cols,
                          const std::vector<std::vector<std::string>>& lines)
{
    const auto row = [](const std::vector<std::string>& cells) {
        std::string s;
        for (const auto& c : cells)
            s += (s.empty() ? "" : " | ") + c;
        return "| " + s + " |\n";
    };
    std::string out = row(lines.front()) + "|";
    for (const auto& c : cols)
        out += c.markedRight ? "---:|" : "---|";
    out += "\n";
    for (std::size_t i = 1; i < lines.size(); ++i)
        out += row(lines[i]);
    return out;
}
}  // namespace

std::string formatRunTable(const RunTable& table, TableFormat format)
{
    const auto& cols = table.columns;
    if (format == TableFormat::Json)
        return runTableJson(table);
    // Text and Markdown show numbers short; CSV keeps them whole.
    auto shown = [&](const std::string& text) {
        return format == TableFormat::Csv        ? csvField(text)
               : format == TableFormat::Markdown ? markdownCell(text)
                                                 : text;
    };
    auto cellText = [&](const RunTableCell& cell, const RunTableColumn& col) {
        if (format != TableFormat::Csv && col.kind == RunTableColumn::Result && col.numeric)
            return shortNumber(cell.value, "");
        return shown(cell.text);
    };
    std::vector<std::vector<std::string>> lines(1);
    for (const auto& c : cols)
        lines[0].push_back(shown(c.name));
    for (const auto& row : table.rows) {
        lines.emplace_back();
        for (std::size_t c = 0; c < cols.size(); ++c)
            lines.back().push_back(cellText(row[c], cols[c]));
    }
    std::string out;
    if (format == TableFormat::Csv) {
        for (const auto& l : lines) {
            for (std::size_t c = 0; c < l.size(); ++c)
                out += (c ? "," : "") + l[c];
            out += "\n";
        }
        return out;
    }
    std::vector<std::size_t> width(cols.size(), 0);
    for (const auto& l : lines)
        for (std::size_t c = 0; c < l.size(); ++c)
            width[c] = std::max(width[c], l[c].size());
    const bool md = format == TableFormat::Markdown;
    if (md && table.layout == RunTable::Layout::Summary)
        return plainMarkdown(cols, lines);
    const bool right = table.layout == RunTable::Layout::Runs;
    auto pad = [&](const std::string& s, std::size_t c) {
        const std::string fill(width[c] - s.size(), ' ');
        return right && cols[c].numeric ? fill + s : s + fill;  // numbers to the right
    };
    for (std::size_t i = 0; i < lines.size(); ++i) {
        std::string line;
        for (std::size_t c = 0; c < cols.size(); ++c)
            line += (md ? "| " : (c ? "  " : "")) + pad(lines[i][c], c) + (md ? " " : "");
        if (!md)  // no spaces after the last column's text
            line.erase(line.find_last_not_of(' ') + 1);
        out += line + (md ? "|\n" : "\n");
        if (md && i == 0) {
            for (std::size_t c = 0; c < cols.size(); ++c)
                out += "|" + std::string(width[c] + 1, '-') + (cols[c].numeric ? ":" : "-");
            out += "|\n";
        }
    }
    return out;
}

RunTableCell runListSortCell(const RunIndexEntry& r, const std::string& column)
{
    const auto number = [](double v) { return RunTableCell{std::string(), v}; };
    const auto text = [](std::string t) { return RunTableCell{std::move(t), kNoValue}; };
    if (column == "seed")
        return r.seed >= 0 ? number(double(r.seed)) : RunTableCell{};
    if (column == "created")
        return text(createdText(r));
    if (column == "size")
        return number(double(r.hidden) * 1000 + r.layers);
    if (column == "dims")
        return number(r.dims);
    if (column == "points")
        return number(r.points);
    if (column == "run_id")
        return text(r.info.runId);
    if (column == "status")  // the stored word, as the studio sorts it ("cancelled", not "stopped")
        return text(r.info.status);
    if (column == "notes")
        return text(r.info.notes);
    if (column == "tags") {
        std::string joined;
        for (const auto& t : r.info.tags)
            joined += (joined.empty() ? "" : ", ") + t;
        return text(joined);
    }
    return runCell(r, column);
}

void sortRunsBy(std::vector<RunIndexEntry>& runs, const std::string& column, bool descending)
{
    std::vector<std::pair<RunTableCell, std::size_t>> keys;
    for (std::size_t i = 0; i < runs.size(); ++i)
        keys.push_back({runListSortCell(runs[i], column), i});
    // A cell's rank: none, then numbers, then texts (what a mixed column holds).
    const auto rank = [](const RunTableCell& c) {
        return std::isfinite(c.value) ? 1 : c.text.empty() ? 0 : 2;
    };
    std::stable_sort(keys.begin(), keys.end(), [&](const auto& a, const auto& b) {
        const auto& x = descending ? b.first : a.first;
        const auto& y = descending ? a.first : b.first;
        if (rank(x) != rank(y))
            return rank(x) < rank(y);
        if (rank(x) == 1)
            return x.value < y.value;
        return rank(x) == 2 && x.text < y.text;
    });
    std::vector<RunIndexEntry> sorted;
    sorted.reserve(runs.size());
    for (const auto& k : keys)
        sorted.push_back(std::move(runs[k.second]));
    runs = std::move(sorted);
}

}  // namespace lengen::engine
