#pragma once
// Runs as a table of settings and results (issue 55), TensorBoard's HParams table in text: a row
// per run, the config keys that vary among the runs (or the keys asked for), then what each run
// reached: final and least loss, steps/s, wall time, and every stored evaluation at the training
// length and at its longest length. `lengen runs --columns`, `lengen sweep table` and the
// studio's hyperparameter view read the same table. A value a run does not have is an empty
// cell (null in JSON), never 0.

#include <string>
#include <vector>

#include "lengen/engine/run_index.h"

namespace lengen::engine {

struct RunTableCell {
    std::string text;         ///< as written in CSV ("" where the run has no value)
    double value = kNoValue;  ///< the number, for numeric columns (NaN where none)
};

struct RunTableColumn {
    std::string name;  ///< "run", a config key, "final_loss", "ood_length@train", ...
    enum Kind { Label, Key, Result } kind = Key;
    bool numeric = false;      ///< every value it holds is a number (results; a key with numbers)
    bool markedRight = false;  ///< Layout::Summary's Markdown marks it right-aligned
};

struct RunTable {
    std::vector<RunTableColumn> columns;
    std::vector<std::vector<RunTableCell>> rows;  ///< one per run, a cell per column
    /// How text and Markdown lay cells out. Runs (`lengen runs`, `sweep table`): each cell
    /// padded to its column's width, numbers right-aligned. Summary (the sweep's summary of
    /// `sweep aggregate` and `export --figure table`, as it has always printed): text columns
    /// left-aligned; Markdown cells unpadded, the alignment row marking `markedRight` columns.
    enum class Layout { Runs, Summary } layout = Layout::Runs;
};

/// The rows in the given order, each named by `labels[i]` (run id, cell name) in a first column
/// called `labelColumn`. A key is a resolved config key, or pe, task, backbone. `keys` empty:
/// task, pe and backbone where they differ among the runs, then the config keys that differ
/// (variedKeys).
RunTable runTable(const std::vector<RunIndexEntry>& runs, const std::vector<std::string>& labels,
                  const std::vector<std::string>& keys, const std::string& labelColumn = "run");
/// The same over runs held elsewhere (the studio's Runs list shares its entries, unchanged).
RunTable runTable(const std::vector<const RunIndexEntry*>& runs,
                  const std::vector<std::string>& labels, const std::vector<std::string>& keys,
                  const std::string& labelColumn = "run");

/// One run's cell under any column a runs table can have (issue 72: the Runs list's chosen
/// columns): a result (status, steps, final_loss, min_loss, steps_per_s, wall_s,
/// "<method>@train", "<method>@longest") or a key (runValue), numbers with their value.
RunTableCell runCell(const RunIndexEntry& run, const std::string& column);
/// A cell of text, with its number where the text reads whole as one ("0.0003", "8000"; "rope"
/// and "[1, 2]" have none): how a key's value enters a table.
RunTableCell textCell(const std::string& text);
/// Every column the runs offer beyond the label, as `lengen runs --columns` names them: the
/// results, each stored method's two, then every config key any run has (sorted).
std::vector<std::string> runColumnNames(const std::vector<const RunIndexEntry*>& runs);

/// One of the Runs list's fixed columns (issue 82 §3): the stable key that the studio's settings,
/// saved views (lengen-views.json) and `lengen runs --view` name it by, and the header shown.
struct RunListColumn {
    const char* key;     ///< "task", "pe", "created", ...
    const char* header;  ///< "Task", "PE", "Created (UTC)", ...
};
/// The fixed columns in the list's order (the studio's RunTableModel::Column follows it).
const std::vector<RunListColumn>& runListColumns();
/// A fixed column's key from its key, or from its header as files written before the keys named
/// it ("Created (UTC)" -> "created"); "" for a name that is neither.
std::string runListColumnKey(const std::string& name);
/// A run's value under a Runs-list column, to sort by (a saved view's `columns.sort`, which
/// `lengen runs --view` applies as the studio does): a fixed column by its key (seed, created,
/// size as hidden × 1000 + layers, dims, points, tags and notes as text, the rest as runCell)
/// or any column runCell knows. Numbers in `value`; a run without one sorts first.
RunTableCell runListSortCell(const RunIndexEntry& run, const std::string& column);
/// Sorts runs by a Runs-list column as the studio's header does (its sort role): numbers as
/// numbers, texts as written (case matters, as in Qt's sort), runs without a value first (last
/// when descending); ties keep their order.
void sortRunsBy(std::vector<RunIndexEntry>& runs, const std::string& column, bool descending);

/// Whether a column of every runs table is a result (status, steps, final_loss, min_loss,
/// steps_per_s, wall_s, or a method's) rather than a key: what a caller that asks for keys by
/// name leaves out.
bool isResultColumn(const std::string& name);
/// A stored method's column: "<method>@train" or "<method>@longest".
bool isMethodColumn(const std::string& name);

/// A brush on a parallel-coordinates axis of a runs table (the studio's Hyperparameters tab), by
/// the column's name, so it survives a change of the axes shown; on a text axis also by the
/// names of its first and last category, since the indices move as categories come.
struct HParamsBrush {
    std::string column;
    double low = 0, high = 0;
    std::string lowCategory, highCategory;  ///< "" on a numeric axis
};

/// What the Hyperparameters tab draws of a runs table: its axes, colour and brushes (what its
/// provenance and a saved view record).
struct HParamsChoice {
    std::vector<std::string> axes;  ///< table columns, in order
    std::string color;              ///< the column that colours the runs, "" for one colour
    std::vector<HParamsBrush> brushes;
};

enum class TableFormat { Text, Csv, Markdown, Json };
/// CSV (RFC 4180 quoting), Markdown (numbers in 4 significant digits), JSON (an array of
/// objects; numbers as numbers, missing values null) or aligned text.
std::string formatRunTable(const RunTable& table, TableFormat format);

/// A number in 4 significant digits ("0.02951", "2.158"); `nonFinite` for NaN and infinities.
std::string shortNumber(double v, const char* nonFinite = "nan");
/// A CSV field, quoted where it holds a comma, a quote or a line break.
std::string csvField(const std::string& s);

}  // namespace lengen::engine
