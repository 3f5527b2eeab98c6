// sweepTable: one row per group (its axis values as columns), then seeds, the value at the
// training length and at the longest position, each "mean [low, high]" over seeds; built as a
// runs table and written by engine::formatRunTable (one writer of CSV, Markdown, JSON, text).

#include "sweep_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <tuple>
#include <utility>

#include "lengen/engine/errors.h"

namespace lengen::cli {

namespace {

std::string num(double v) { return shortNumber(v); }
using engine::RunTable;
using engine::RunTableCell;
using engine::RunTableColumn;

// The group columns: the sweep's group-by axes, then `intervention` when any row has one.
std::vector<std::string> sweepTableKeys(const engine::SweepAggregate& aggregate,
                                        const std::vector<engine::AggregateRow>& rows)
{
    // Interventions (docs/interventions.md) are one more column after the sweep's axes.
    std::vector<std::string> keys = aggregate.groupBy;
    for (const auto& r : rows)
        for (const auto& [k, v] : r.set->groupAxes)
            if (k == "intervention" && std::find(keys.begin(), keys.end(), k) == keys.end())
                keys.push_back(k);
    return keys;
}

RunTableCell numberCell(double v, std::string text) { return {std::move(text), v}; }

// One group's cells: its axis values (or its name where the sweep has no axes), seeds, band;
// then the two values, as "mean [low, high] @position" each (`split` false) or each number in
// a column of its own (`split` true: CSV and JSON).
std::vector<RunTableCell> sweepTableRow(const engine::AggregateRow& r,
                                        const std::vector<std::string>& keys, bool split)
{
    std::vector<RunTableCell> cells;
    if (keys.empty())
        cells.push_back({r.set->group, engine::kNoValue});
    for (const auto& key : keys) {
        std::string v = key == "intervention" ? "none" : "";
        for (const auto& [k, val] : r.set->groupAxes)
            if (k == key)
                v = val;
        cells.push_back(engine::textCell(v));
    }
    cells.push_back(numberCell(double(r.seeds), std::to_string(r.seeds)));
    cells.push_back({r.band, engine::kNoValue});
    if (!split) {
        for (const auto& [mean, low, high, at] :
             {std::tuple{r.trainMean, r.trainLow, r.trainHigh, r.trainPosition},
              std::tuple{r.lastMean, r.lastLow, r.lastHigh, r.lastPosition}})
            cells.push_back(
                {num(mean) + " [" + num(low) + ", " + num(high) + "] @" + std::to_string(at),
                 engine::kNoValue});
        return cells;
    }
    cells.push_back(numberCell(r.trainPosition, std::to_string(r.trainPosition)));
    for (double v : {r.trainMean, r.trainLow, r.trainHigh})
        cells.push_back(numberCell(v, num(v)));
    cells.push_back(numberCell(r.lastPosition, std::to_string(r.lastPosition)));
    for (double v : {r.lastMean, r.lastLow, r.lastHigh})
        cells.push_back(numberCell(v, num(v)));
    return cells;
}

// The table of one method as a runs table (engine::formatRunTable writes every format): the
// display form for text and Markdown, the split form with a method column first for CSV and
// JSON. A key column is numeric where every value is a number (right-aligned, a JSON number).
RunTable sweepRunTable(const std::vector<engine::AggregateRow>& rows,
                       const std::vector<std::string>& keys, const std::string& what,
                       const std::string& method, bool split)
{
    RunTable t;
    t.layout = RunTable::Layout::Summary;  // its text and Markdown bytes as before issue 82
    if (split)
        t.columns.push_back({"method", RunTableColumn::Label, false});
    for (const auto& k : keys.empty() ? std::vector<std::string>{"group"} : keys)
        t.columns.push_back({k, keys.empty() ? RunTableColumn::Label : RunTableColumn::Key, true});
    t.columns.push_back({"seeds", RunTableColumn::Result, true, true});
    t.columns.push_back({"band", RunTableColumn::Result, false});
    if (split)
        for (const char* c : {"train_position", "train_mean", "train_low", "train_high",
                              "longest_position", "longest_mean", "longest_low", "longest_high"})
            t.columns.push_back({c, RunTableColumn::Result, true});
    else
        for (const char* c : {" at train length", " at longest"})
            t.columns.push_back({what + c, RunTableColumn::Result, false, true});
    for (const auto& r : rows) {
        auto cells = sweepTableRow(r, keys, split);
        if (split)
            cells.insert(cells.begin(), {method, engine::kNoValue});
        t.rows.push_back(std::move(cells));
    }
    const std::size_t first = split ? 1 : 0, count = keys.empty() ? 1 : keys.size();
    for (std::size_t c = first; c < first + count; ++c)
        for (const auto& row : t.rows)
            t.columns[c].numeric = t.columns[c].numeric && std::isfinite(row[c].value);
    return t;
}

}  // namespace

std::vector<std::string> tableColumns(const std::vector<std::string>& columns)
{
    std::vector<std::string> keys;
    for (const auto& c : columns)
        if (!c.empty() && c != "auto")
            keys.push_back(c);
    return keys;
}

void splitColumns(std::vector<std::string>& columns)
{
    std::vector<std::string> keys;
    for (const auto& value : columns)
        for (std::size_t at = 0;;) {
            const auto comma = std::min(value.find(',', at), value.size());
            keys.push_back(value.substr(at, comma - at));
            if (keys.back().empty())
                throw engine::Error(engine::ErrorKind::Usage,
                                    "--columns '" + value +
                                        "': name auto or keys, KEY,KEY (an empty key names none)");
            if (comma == value.size())
                break;
            at = comma + 1;
        }
    columns = std::move(keys);
}

TableFormat tableFormat(const std::string& name)
{
    return name == "csv"    ? TableFormat::Csv
           : name == "md"   ? TableFormat::Markdown
           : name == "json" ? TableFormat::Json
                            : TableFormat::Text;
}

std::string sweepTable(const engine::SweepAggregate& aggregate, const std::string& method,
                       TableFormat format)
{
    const auto rows = engine::aggregateTable(aggregate, method);
    if (rows.empty())
        return {};
    const bool accuracy = rows.front().set->classification;
    const std::string what = accuracy ? "accuracy" : "error";
    const bool split = format == TableFormat::Csv || format == TableFormat::Json;
    return engine::formatRunTable(
        sweepRunTable(rows, sweepTableKeys(aggregate, rows), what, method, split), format);
}

}  // namespace lengen::cli
