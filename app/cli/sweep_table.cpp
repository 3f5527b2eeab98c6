// sweepTable: one row per group (its axis values as columns), then seeds, the value at the
// training length and at the longest position, each "mean [low, high]" over seeds.

#include "sweep_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "lengen/engine/errors.h"

namespace lengen::cli {

namespace {

std::string num(double v) { return shortNumber(v); }
using engine::csvField;

using SweepTableRows = std::vector<std::vector<std::string>>;

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

// Appends one group's row to the display table and to the CSV rows (values split into columns).
void addSweepTableRow(const engine::AggregateRow& r, const std::vector<std::string>& keys,
                      SweepTableRows& table, SweepTableRows& csv)
{
    std::vector<std::string> cells;
    if (keys.empty())
        cells.push_back(r.set->group);
    for (const auto& key : keys) {
        std::string v = key == "intervention" ? "none" : "";
        for (const auto& [k, val] : r.set->groupAxes)
            if (k == key)
                v = val;
        cells.push_back(v);
    }
    cells.push_back(std::to_string(r.seeds));
    cells.push_back(r.band);
    auto csvRow = cells;
    cells.push_back(num(r.trainMean) + " [" + num(r.trainLow) + ", " + num(r.trainHigh) + "] @" +
                    std::to_string(r.trainPosition));
    cells.push_back(num(r.lastMean) + " [" + num(r.lastLow) + ", " + num(r.lastHigh) + "] @" +
                    std::to_string(r.lastPosition));
    for (auto v :
         {std::to_string(r.trainPosition), num(r.trainMean), num(r.trainLow), num(r.trainHigh),
          std::to_string(r.lastPosition), num(r.lastMean), num(r.lastLow), num(r.lastHigh)})
        csvRow.push_back(v);
    table.push_back(cells);
    csv.push_back(csvRow);
}

// The CSV form: a method column first, each value and its band in columns of their own.
std::string sweepTableCsv(const std::vector<std::string>& header, SweepTableRows csv,
                          const std::string& method)
{
    std::string out;
    auto h = std::vector<std::string>(header.begin(), header.end() - 2);
    for (const char* c : {"train_position", "train_mean", "train_low", "train_high",
                          "longest_position", "longest_mean", "longest_low", "longest_high"})
        h.push_back(c);
    h.insert(h.begin(), "method");
    for (auto& row : csv)
        row.insert(row.begin(), method);
    csv.insert(csv.begin(), h);
    for (const auto& row : csv) {
        std::string line;
        for (const auto& c : row)
            line += (line.empty() ? "" : ",") + csvField(c);
        out += line + "\n";
    }
    return out;
}

// The Markdown form: numeric columns (seeds and the two values) aligned right.
std::string sweepTableMarkdown(const std::vector<std::string>& header, const SweepTableRows& table)
{
    std::string out;
    out += "| " + [&] {
        std::string s;
        for (const auto& h : header)
            s += (s.empty() ? "" : " | ") + h;
        return s;
    }() + " |\n|";
    for (size_t i = 0; i < header.size(); ++i)
        out += i + 2 >= header.size() || header[i] == "seeds" ? "---:|" : "---|";
    out += "\n";
    for (const auto& row : table) {
        std::string s;
        for (const auto& c : row)
            s += (s.empty() ? "" : " | ") + c;
        out += "| " + s + " |\n";
    }
    return out;
}

// The aligned text form: each column as wide as its widest cell, two spaces between.
std::string sweepTableText(const std::vector<std::string>& header, const SweepTableRows& table)
{
    std::string out;
    std::vector<size_t> width(header.size());
    for (size_t i = 0; i < header.size(); ++i) {
        width[i] = header[i].size();
        for (const auto& row : table)
            width[i] = std::max(width[i], row[i].size());
    }
    auto line = [&](const std::vector<std::string>& row) {
        std::string s;
        for (size_t i = 0; i < row.size(); ++i)
            s += row[i] + std::string(i + 1 < row.size() ? width[i] - row[i].size() + 2 : 0, ' ');
        return s + "\n";
    };
    out += line(header);
    for (const auto& row : table)
        out += line(row);
    return out;
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
    const std::vector<std::string> keys = sweepTableKeys(aggregate, rows);
    std::vector<std::string> header = keys;
    if (header.empty())
        header.push_back("group");
    header.insert(header.end(), {"seeds", "band", what + " at train length", what + " at longest"});
    std::vector<std::vector<std::string>> table;
    std::vector<std::vector<std::string>> csv;
    for (const auto& r : rows)
        addSweepTableRow(r, keys, table, csv);
    if (format == TableFormat::Csv)
        return sweepTableCsv(header, std::move(csv), method);
    if (format == TableFormat::Markdown)
        return sweepTableMarkdown(header, table);
    return sweepTableText(header, table);
}

}  // namespace lengen::cli
