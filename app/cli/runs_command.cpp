// `lengen runs FOLDER...`: the runs under folders, through the index the studio's Runs list
// shares (run_index.h): one line each, filtered by `--where key=value` (any resolved config key,
// or pe, task, backbone, status, seed, tag, id, sweep), JSON lines for scripts, or with --columns a
// table of varied keys and results (run_table.h).

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <utility>

#include "command_registry.h"
#include "common_options.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/run_file.h"
#include "lengen/engine/run_index.h"
#include "lengen/engine/run_table.h"
#include "lengen/engine/saved_views.h"
#include "sweep_table.h"

namespace lengen::cli {

namespace {

struct RunsArgs {
    std::vector<std::string> folders;
    std::vector<std::string> where;
    bool json = false;
    bool stats = false;
    std::vector<std::string>
        columns;             ///< none (the listing), auto or KEYs: the table (run_table.h)
    std::string format;      ///< text | csv | md | json: the table's
    std::string view;        ///< a saved view's name (saved_views.h): its filter and columns
    bool viewGiven = false;  ///< --view was given (--view '' is no view's name: exit 64)
};

// A saved view as `runs` applies it: its filter's terms, its words, its key columns.
struct ViewFilter {
    std::vector<engine::RunFilterTerm> terms;
    std::string words;  ///< the rest of the filter: engine::runHasText looks for it
    std::vector<std::string> columns;
    std::string sortColumn;  ///< the view's sort ("" none): its column and order
    bool sortDescending = false;
};

// The Runs list's fixed columns that are keys of a runs table, by their keys
// (engine::runListColumns; the others are its results or the label: steps, final loss, status,
// the run id): a view's table shows those it does not hide.
const char* const kViewKeyColumns[] = {"task", "pe", "backbone", "seed", "sweep"};

// --view NAME: the view of that name in the first folder whose lengen-views.json holds it.
ViewFilter savedViewFilter(const RunsArgs& a)
{
    const engine::SavedView* found = nullptr;
    std::vector<engine::SavedView> views;
    std::string file, names;
    for (const auto& folder : a.folders) {
        file = engine::viewsFileFor(folder);
        views = engine::readSavedViews(file);
        if ((found = engine::findView(views, a.view)))
            break;
        for (const auto& v : views)
            names += (names.empty() ? "" : ", ") + v.name;
    }
    if (!found)
        throw engine::Error(engine::ErrorKind::Usage,
                            "--view " + a.view + ": no such view in " +
                                (a.folders.size() == 1 ? file : "the folders' lengen-views.json") +
                                (names.empty() ? " (the studio shares a view with a folder by "
                                                 "View ▸ Saved views ▸ Save current view… → "
                                                 "Share with the runs folder)"
                                               : " (views there: " + names + ")"));
    // The same reading of the filter as the Runs list's (engine::parseFilter).
    auto parsed = engine::parseFilter(found->filter);
    if (!parsed.errors.empty())
        throw engine::Error(engine::ErrorKind::Config,
                            file + ": view '" + a.view + "': filter " + parsed.errors.front());
    ViewFilter f{std::move(parsed.terms),
                 std::move(parsed.text),
                 {},
                 found->sortColumn,
                 found->sortDescending};
    for (const char* key : kViewKeyColumns)
        if (std::find(found->hiddenColumns.begin(), found->hiddenColumns.end(), key) ==
            found->hiddenColumns.end())
            f.columns.push_back(key);
    for (const auto& c : found->extraColumns)
        if (!engine::isResultColumn(c))
            f.columns.push_back(c);
    return f;
}

// --columns and --format: the table of the runs kept, one row each.
void printRunTable(const RunsArgs& a, const std::vector<engine::RunIndexEntry>& runs)
{
    std::vector<std::string> labels;
    for (const auto& r : runs)
        labels.push_back(r.info.runId.empty() ? r.path : r.info.runId);
    const auto table = engine::runTable(runs, labels, tableColumns(a.columns));
    std::fputs(engine::formatRunTable(table, tableFormat(a.format)).c_str(), stdout);
}

// --where: the filter terms, read as the Runs list reads its filter (engine::parseFilter:
// "min_loss < 1.2" is one term), or Error(Usage) naming the word that is not one.
std::vector<engine::RunFilterTerm> parseRunsWhere(const std::vector<std::string>& where)
{
    std::vector<engine::RunFilterTerm> filters;
    for (const auto& w : where) {
        auto parsed = engine::parseFilter(w);
        if (!parsed.errors.empty())
            throw engine::Error(engine::ErrorKind::Usage, "--where " + parsed.errors.front());
        if (!parsed.text.empty() || parsed.terms.empty())
            throw engine::Error(engine::ErrorKind::Usage,
                                "--where '" + w +
                                    "': write key=value, key<value, key=low..high (pe=rope, "
                                    "final_loss<2)");
        filters.insert(filters.end(), parsed.terms.begin(), parsed.terms.end());
    }
    return filters;
}

// Whether a run passes every --where term.
bool runsFilterKeeps(const engine::RunIndexEntry& r,
                     const std::vector<engine::RunFilterTerm>& filters)
{
    bool keep = true;
    for (const auto& term : filters)
        keep = keep && engine::runMatches(r, term);
    return keep;
}

// The listing's line of one run: a JSON object with --json, else aligned text. A value the run
// lacks is null in JSON and an empty field in text, never a number (a damaged run read "seed
// -1 … 0/0 … loss 0"): a damaged run has its status and path, an unknown seed (-1) and a
// loss before any step are none (engine::runCell's rule for the table).
void printRunsListLine(const engine::RunIndexEntry& r, bool json)
{
    const bool damaged = engine::isDamaged(r);
    const auto loss = engine::runCell(r, "final_loss");
    auto count = [&](std::int64_t n) { return damaged ? nlohmann::json() : nlohmann::json(n); };
    if (json) {
        nlohmann::json j{{"path", r.path},
                         {"run_id", r.info.runId},
                         {"task", r.info.task},
                         {"pe", r.info.positionEncoding},
                         {"backbone", r.info.backbone},
                         {"seed", r.seed >= 0 ? nlohmann::json(r.seed) : nlohmann::json()},
                         {"status", engine::statusLabel(r.info.status)},
                         {"steps", count(r.steps)},
                         {"total_steps", count(r.info.totalSteps)},
                         {"final_loss", std::isfinite(loss.value) ? nlohmann::json(loss.value)
                                                                  : nlohmann::json()},
                         {"eval", r.evalMethods},
                         {"probes", r.probes},
                         {"tags", r.info.tags},
                         {"sweep", r.info.sweepName},
                         {"sweep_cell", r.info.sweepCell}};
        std::printf("%s\n",
                    j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
        return;
    }
    std::string tags;
    for (const auto& t : r.info.tags)
        tags += (tags.empty() ? "" : ",") + t;
    const std::string seed = r.seed >= 0 ? std::to_string(r.seed) : "";
    const std::string steps = damaged ? "" : std::to_string(r.steps);
    const std::string total = damaged ? "" : std::to_string(r.info.totalSteps);
    std::printf("%-8s %-18s %-14s seed %-6s %7s/%-7s %-11s loss %-9s %s%s%s\n",
                r.info.runId.c_str(), r.info.task.c_str(), r.info.positionEncoding.c_str(),
                seed.c_str(), steps.c_str(), total.c_str(),
                engine::statusLabel(r.info.status).c_str(),
                engine::shortNumber(loss.value, "").c_str(), r.path.c_str(),
                tags.empty() ? "" : "  tags ", tags.c_str());
}

// After the listing: --where and --columns keys that no run has, with the nearest key.
void warnUnknownRunsKeys(const RunsArgs& a, const std::vector<engine::RunFilterTerm>& filters,
                         const std::vector<engine::RunIndexEntry>& all)
{
    std::vector<const engine::RunIndexEntry*> pointers;
    for (const auto& r : all)
        pointers.push_back(&r);
    for (const auto& term : filters)
        if (const auto problem = engine::filterKeyProblem(pointers, term.key); !problem.empty())
            std::fprintf(stderr, "--where %s: %s\n", term.text.c_str(), problem.c_str());
    // A column no run has prints empty: said, with the nearest key (issue 70, defect 10). A
    // result column (ood_length@train) is the table's own.
    for (const auto& key : a.columns)
        if (key != "auto" && key.find('@') == std::string::npos && !pointers.empty())
            if (const auto problem = engine::filterKeyProblem(pointers, key); !problem.empty())
                std::fprintf(stderr, "--columns %s: %s\n", key.c_str(), problem.c_str());
}

int runRuns(RunsArgs a)
{
    std::vector<engine::RunFilterTerm> filters = parseRunsWhere(a.where);
    if (a.viewGiven && a.view.empty())
        engine::checkViewName(a.view);  // Error(Usage): a view has a name of 1 to 80 bytes
    std::string words, sortColumn;
    bool descending = false;
    if (a.viewGiven) {  // the view's terms join --where; its columns unless --columns; its sort
        auto view = savedViewFilter(a);
        filters.insert(filters.end(), view.terms.begin(), view.terms.end());
        words = std::move(view.words);
        sortColumn = view.sortColumn;
        descending = view.sortDescending;
        if (a.columns.empty() && !a.json)
            a.columns = view.columns.empty() ? std::vector<std::string>{"auto"} : view.columns;
    }
    const bool tableMode = !a.columns.empty() || !a.format.empty();
    if (tableMode && a.json)
        throw engine::Error(engine::ErrorKind::Usage,
                            "--json lists runs as JSON lines; the table takes --format json");
    std::vector<engine::RunIndexEntry> kept;  // the table's rows, or the runs to sort
    std::size_t shown = 0, total = 0;
    std::vector<engine::RunIndexEntry> all;  // for a filter key no run has (said at the end)
    for (const auto& folder : a.folders) {
        const auto start = std::chrono::steady_clock::now();
        engine::RunIndexStats st;
        const auto runs = engine::indexRuns(folder, &st);
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        total += runs.size();
        all.insert(all.end(), runs.begin(), runs.end());
        for (const auto& r : runs) {
            if (!runsFilterKeeps(r, filters) || !engine::runHasText(r, words))
                continue;
            ++shown;
            if (tableMode || !sortColumn.empty())
                kept.push_back(r);
            else
                printRunsListLine(r, a.json);
        }
        if (a.stats)
            std::fprintf(
                stderr, "%s: %zu runs in %.2f s, %zu from the index, %zu read from their files%s\n",
                folder.c_str(), st.runs, seconds, st.fromIndex, st.read,
                st.indexWritten ? "; index written" : "");
    }
    if (!sortColumn.empty())  // as the studio's Runs list sorts them (issue 82 §3)
        engine::sortRunsBy(kept, sortColumn, descending);
    if (tableMode)
        printRunTable(a, kept);
    else
        for (const auto& r : kept)
            printRunsListLine(r, a.json);
    std::fprintf(stderr, "%zu of %zu runs\n", shown, total);
    warnUnknownRunsKeys(a, filters, all);
    return 0;
}

}  // namespace

void addRunsCommand(CLI::App& app, CommandTable& table)
{
    auto a = std::make_shared<RunsArgs>();
    auto* cmd = app.add_subcommand(
        "runs", "List the runs under folders (through <folder>/.lengen-index.json, "
                "rebuilt where stale), filtered by --where");
    cmd->add_option("folders", a->folders, "Runs folders (any depth)")
        ->required()
        ->check(CLI::ExistingPath);
    cmd->add_option("--where", a->where,
                    "key=value, key!=value, key<v, key<=v, key>v, key>=v or key=low..high: a "
                    "resolved config key (model.num_hidden_layers=6), pe, task, backbone, "
                    "status, seed, tag, id, sweep or a result (final_loss, min_loss, steps, "
                    "steps_per_s, wall_s, ood_length@train, ood_length@longest); numbers "
                    "compare as numbers; repeatable, all must hold");
    addJsonFlag(cmd, a->json);
    addColumnsOption(cmd, a->columns, kColumnsHelp);
    cmd->add_option("--format", a->format, "The table's format (implies --columns auto)")
        ->check(CLI::IsMember({"text", "csv", "md", "json"}));
    auto* view = cmd->add_option("--view", a->view,
                                 "A view saved in the studio and shared with the folder "
                                 "(<folder>/lengen-views.json): its filter, and its columns as "
                                 "--columns")
                     ->type_name("NAME");
    cmd->add_flag("--stats", a->stats,
                  "Say per folder how long listing took and what the index held");
    table.add(cmd, [a, view](const Session&) {
        splitColumns(a->columns);
        a->viewGiven = view->count() > 0;
        return runRuns(*a);
    });
}

}  // namespace lengen::cli
