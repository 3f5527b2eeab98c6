#include "export_command.h"

#include <QApplication>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>

#include "command_registry.h"
#include "common_options.h"
#include "compare_figure.h"
#include "figure_export.h"
#include "figure_provenance.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/run_file.h"
#include "lengen/engine/seed_stats.h"
#include "lengen/engine/sweep.h"
#include "lengen/engine/sweep_aggregate.h"
#include "option_ranges.h"
#include "parallel_coords.h"
#include "run_figures.h"
#include "sweep_figures.h"
#include "sweep_table.h"

namespace fs = std::filesystem;

namespace lengen::cli {

namespace {

using engine::Error;
using engine::ErrorKind;

// QCustomPlot draws through QWidget, which needs a QApplication. The command line shows no
// window, so it always runs on Qt's offscreen platform: a stale DISPLAY (SSH, a job script)
// made Qt abort every export, csv and tex included (issue 54).
std::unique_ptr<QApplication> makeApplication(const Session& session)
{
    qputenv("QT_QPA_PLATFORM", "offscreen");
    if (session.runtimeDir.empty()) {  // else Qt warns on every run
        const auto dir =
            fs::temp_directory_path() / ("lengen-runtime-" + std::to_string(::getuid()));
        std::error_code ec;
        fs::create_directory(dir, ec);
        fs::permissions(dir, fs::perms::owner_all, ec);
        qputenv("XDG_RUNTIME_DIR", QByteArray::fromStdString(dir.string()));
    }
    static int argc = 1;
    static char name[] = "lengen";
    static char* argv[] = {name, nullptr};
    return std::make_unique<QApplication>(argc, argv);
}

const char* extension(plots::Format f)
{
    switch (f) {
    case plots::Format::Png: return "png";
    case plots::Format::Svg: return "svg";
    case plots::Format::Pdf: return "pdf";
    case plots::Format::Csv: return "csv";
    case plots::Format::Tex: return "tex";
    }
    return "png";
}

// One figure in one format, and beside it what made it (<figure>.provenance.json, written with
// the first format) unless --no-provenance; `hidden`: curves left out (a provenance's view).
// A --format name, or the usage error that lists the formats (one message for every path).
plots::Format formatNamed(const std::string& name)
{
    const auto fmt = plots::formatFromName(name);
    if (!fmt)
        throw Error(ErrorKind::Usage,
                    "export: unknown format '" + name + "' (png, svg, pdf, csv, tex)");
    return *fmt;
}

std::vector<plots::Format> formatsNamed(const std::vector<std::string>& names)
{
    std::vector<plots::Format> out;
    for (const auto& n : names)
        out.push_back(formatNamed(n));
    return out;
}

// Run figure `name` of `run` shown as `view` (--log-y, --legend-outside, or what a provenance
// recorded), in one format; its provenance records that view.
void exportOne(const std::string& run, const std::string& name, const figures::ViewOptions& view,
               plots::Format format, const fs::path& path, const ExportArgs& args, bool provenance)
{
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    auto figure = figures::makeFigure(run, name, view.map);
    if (figure.plot)
        figures::applyView(*figure.plot, view);
    const QString out = QString::fromStdString(path.string());
    const auto result =
        figure.plot ? plots::exportFigure(*figure.plot, out, format, args.dpi, args.standalone)
                    : plots::exportHeatmap(*figure.heatmap, out, format, args.dpi, args.standalone);
    if (!result.ok)
        throw Error(ErrorKind::Io, result.error.toStdString());
    if (!args.quiet)
        std::printf("%s\n", path.string().c_str());
    if (provenance && !args.noProvenance) {
        const auto file = figures::writeProvenance(
            path.string(), figures::figureProvenance(figure.sources, name, view), args.standalone);
        if (!args.quiet)
            std::printf("%s\n", file.c_str());
    }
}

// What a rebuild writes: --format's formats, else --out's extension, else the format the
// provenance recorded, else PNG; each at --out (given no extension, or several formats, the
// format's is added) or beside the provenance as <stem>-rebuilt.<ext>. Issue 52: an --out
// without extension got PNG bytes whatever the figure had been.
std::vector<std::pair<plots::Format, fs::path>>
rebuildTargets(const ExportArgs& args, const figures::FigureSource& source, const std::string& stem)
{
    auto formats = formatsNamed(args.formats);
    const fs::path out(args.out);
    if (formats.empty()) {
        std::optional<plots::Format> f;
        if (!args.out.empty() && out.has_extension())
            f = plots::formatFromPath(QString::fromStdString(args.out));
        if (!f && !source.format.empty())
            f = plots::formatFromName(source.format);
        formats = {f.value_or(plots::Format::Png)};
    }
    std::vector<std::pair<plots::Format, fs::path>> targets;
    for (const auto fmt : formats) {
        fs::path path;
        if (args.out.empty())  // appended, never replaced: names hold dots ("scale-x=0.333")
            path = fs::path(args.from).parent_path() / (stem + "-rebuilt." + extension(fmt));
        else if (!out.has_extension() ||
                 plots::formatFromPath(QString::fromStdString(args.out)) == std::nullopt)
            path = fs::path(args.out + "." + extension(fmt));
        else if (formats.size() > 1)
            path = fs::path(out).replace_extension(extension(fmt));
        else
            path = out;
        targets.emplace_back(fmt, path);
    }
    return targets;
}

// A rebuilt figure as the recorded one was written: its hidden curves left out, TeX standalone
// if it was (or --standalone asks).
void writeRebuilt(plots::FigureSpec figure, const figures::FigureSource& source, plots::Format fmt,
                  const fs::path& path, const ExportArgs& args)
{
    figures::applyView(figure, source.view);
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    const auto result = plots::exportFigure(figure, QString::fromStdString(path.string()), fmt,
                                            args.dpi, args.standalone || source.standalone);
    if (!result.ok)
        throw Error(ErrorKind::Io, result.error.toStdString());
    if (!args.quiet)
        std::printf("%s\n", path.string().c_str());
}

// Writes one figure to each target (its folder made first), naming each file unless quiet.
void writeEach(
    const std::vector<std::pair<plots::Format, fs::path>>& targets, const ExportArgs& args,
    const std::function<plots::ExportResult(plots::Format, const QString&, bool standalone)>& write)
{
    for (const auto& [fmt, path] : targets) {
        std::error_code ec;
        fs::create_directories(path.parent_path(), ec);
        const auto result = write(fmt, QString::fromStdString(path.string()), args.standalone);
        if (!result.ok)
            throw Error(ErrorKind::Io, result.error.toStdString());
        if (!args.quiet)
            std::printf("%s\n", path.string().c_str());
    }
}

// What a rebuild is named after: the provenance file's own name ("ab.provenance.json" ->
// "ab"), so two rebuilds in one folder never overwrite each other (issue 70, defect 9: both
// were named after the figure, "compare_standard-rebuilt.png").
std::string provenanceStem(const std::string& from)
{
    std::string name = fs::path(from).filename().string();
    for (const std::string suffix : {".provenance.json", ".json"})
        if (name.size() > suffix.size() &&
            name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
            return name.substr(0, name.size() - suffix.size());
    return name;
}

// --from FILE: the figure a provenance file describes, from the same runs, checked unchanged.
int exportFromProvenance(const ExportArgs& args)
{
    const auto source = figures::readProvenance(args.from);
    const std::string stem = provenanceStem(args.from);
    if (source.name == "grid") {  // a sweep's grid: aggregated again as recorded, in memory
        engine::AggregateOptions options;
        options.groupBy = source.groupBy;
        options.band = engine::bandKindFromName(source.band).value_or(engine::BandKind::Auto);
        options.bootstrapTrials = source.bootstrapTrials;
        const auto aggregate = engine::aggregateSweep(source.run, options);
        // The same cells as drawn: a cell evaluated since would change the grid silently.
        std::vector<std::string> cells;
        for (const auto& set : aggregate.sets)
            if (set.kind == "eval" && set.name == source.method)
                cells.insert(cells.end(), set.cells.begin(), set.cells.end());
        auto recorded = source.cells;
        std::sort(cells.begin(), cells.end());
        std::sort(recorded.begin(), recorded.end());
        if (cells != recorded)
            throw Error(ErrorKind::RunFile,
                        "--from " + args.from + ": the sweep's " + source.method +
                            " results come from " + std::to_string(cells.size()) +
                            " cells now, the grid drew " + std::to_string(recorded.size()) +
                            " (cells evaluated since?)");
        const auto grid = figures::sweepGridFigure(aggregate, source.method);
        writeEach(rebuildTargets(args, source, stem), args,
                  [&](plots::Format fmt, const QString& path, bool standalone) {
                      return plots::exportGrid(grid, path, fmt, args.dpi,
                                               standalone || source.standalone);
                  });
        return 0;
    }
    if (source.name == "compare") {  // Compare's figure: its runs, grouped and banded as recorded
        ui::CompareOptions options;
        options.group = ui::compareGroupFromName(source.group).value_or(ui::CompareGroup::EachRun);
        options.keys = source.keys;
        options.band = engine::bandKindFromName(source.band).value_or(engine::BandKind::Auto);
        options.smoothing = source.smoothing;
        options.x = ui::loggedXFromName(source.x).value_or(ui::LoggedX::Step);
        QStringList runs;
        for (const auto& r : source.runs)
            runs << QString::fromStdString(r);
        auto compared = ui::compareRuns(runs, source.method, source.baselines, options);
        if (!compared.missing.isEmpty())
            throw Error(ErrorKind::RunFile,
                        "--from " + args.from + ": run " + compared.missing.front().toStdString() +
                            " no longer has its " + source.method + " evaluation");
        for (const auto& [fmt, path] : rebuildTargets(args, source, stem))
            writeRebuilt(compared.figure, source, fmt, path, args);
        return 0;
    }
    if (source.name == "hparams") {  // the Hyperparameters view: its runs read again
        const auto spec = figures::hparamsFromRuns(source.runs, source.hparams);
        writeEach(rebuildTargets(args, source, stem), args,
                  [&](plots::Format fmt, const QString& path, bool standalone) {
                      return plots::exportParallel(spec, path, fmt, args.dpi,
                                                   standalone || source.standalone);
                  });
        return 0;
    }
    ExportArgs recorded = args;  // the run figure as it was written: standalone TeX stays so
    recorded.standalone = args.standalone || source.standalone;
    const auto targets = rebuildTargets(args, source, stem);
    for (const auto& [fmt, path] : targets)
        exportOne(source.run, source.name, source.view, fmt, path, recorded,
                  fmt == targets.front().first);
    return 0;
}

bool isSweepFolder(const std::string& path)
{
    return fs::is_directory(path) && fs::exists(fs::path(path) / "sweep.yaml");
}

// The sweep's aggregate file, computed and written now when there is none yet.
engine::SweepAggregate sweepAggregate(const std::string& root, bool quiet)
{
    const std::string file = engine::aggregateFileFor(root);
    if (fs::exists(file))
        return engine::readAggregate(file);
    if (!quiet)
        std::fprintf(stderr, "no %s yet: aggregating the cells now (lengen sweep aggregate)\n",
                     file.c_str());
    auto a = engine::aggregateSweep(root, {});
    engine::writeAggregate(file, a);
    return a;
}

int exportSweep(const ExportArgs& args)
{
    const std::string root = engine::locateSweep(args.run);
    if (args.list) {
        std::printf("%-28s %s\n", "grid",
                    "one panel per task, one curve per PE: mean over seeds with its band");
        std::printf("%-28s %s\n", "table",
                    "value at the train length and the longest length per group (csv, md, json)");
        return 0;
    }
    if (args.all || (args.figure != "grid" && args.figure != "table"))
        throw Error(ErrorKind::Usage,
                    "export: a sweep folder has the figures grid and table (--figure grid|table)");
    const auto aggregate = sweepAggregate(root, args.quiet);
    const auto methods = engine::aggregateMethods(aggregate);
    std::string method = args.method;
    if (method.empty())
        method = std::find(methods.begin(), methods.end(), "ood_length") != methods.end() ||
                         methods.empty()
                     ? "ood_length"
                     : methods.front();
    auto formats = args.formats;
    if (formats.empty())
        formats = {args.out.empty() ? (args.figure == "table" ? "md" : "png")
                                    : fs::path(args.out).extension().string().substr(
                                          fs::path(args.out).has_extension() ? 1 : 0)};
    for (const auto& f : formats) {
        const fs::path path =
            args.out.empty() ? fs::path(root) / "figures" / (args.figure + "_" + method + "." + f)
            : formats.size() > 1 ? fs::path(args.out).replace_extension(f)
                                 : fs::path(args.out);
        std::error_code ec;
        fs::create_directories(path.parent_path(), ec);
        if (args.figure == "table") {
            if (f != "csv" && f != "md" && f != "json")
                throw Error(ErrorKind::Usage,
                            "export: the table is written as csv, md or json, not '" + f + "'");
            const std::string text = sweepTable(aggregate, method, tableFormat(f));
            if (text.empty())
                throw Error(ErrorKind::Usage, "export: the sweep " + aggregate.sweep +
                                                  " has no aggregated '" + method + "' evaluation");
            engine::writeSweepTextFile(path.string(), text);
        } else {
            const auto fmt = formatNamed(f);
            const auto result = plots::exportGrid(figures::sweepGridFigure(aggregate, method),
                                                  QString::fromStdString(path.string()), fmt,
                                                  args.dpi, args.standalone);
            if (!result.ok)
                throw Error(ErrorKind::Io, result.error.toStdString());
        }
        if (!args.quiet)
            std::printf("%s\n", path.string().c_str());
        if (args.figure == "grid" && f == formats.front() && !args.noProvenance) {
            const auto file = figures::writeProvenance(
                path.string(),
                figures::sweepGridProvenance(root, method, aggregate,
                                             figures::aggregateBand(aggregate, method)),
                args.standalone);
            if (!args.quiet)
                std::printf("%s\n", file.c_str());
        }
    }
    return 0;
}

}  // namespace

int runExport(const ExportArgs& args, const Session& session)
{
    if (!args.from.empty()) {
        if (!args.run.empty() || !args.figure.empty() || args.all || args.list)
            throw Error(ErrorKind::Usage, "export --from FILE rebuilds the figure it names: give "
                                          "no run, --figure, --all or --list");
        auto app = makeApplication(session);
        return exportFromProvenance(args);
    }
    if (args.run.empty())
        throw Error(ErrorKind::Usage,
                    "export: give a run (or a sweep folder), or --from FIGURE.provenance.json");
    if (isSweepFolder(args.run)) {
        if (int(args.list) + int(args.all) + int(!args.figure.empty()) != 1)
            throw Error(ErrorKind::Usage, "export: give one of --figure grid|table or --list");
        auto app = makeApplication(session);
        return exportSweep(args);
    }
    if (int(args.list) + int(args.all) + int(!args.figure.empty()) != 1)
        throw Error(ErrorKind::Usage, "export: give one of --figure NAME, --all or --list");
    if ((args.logY || args.legendOutside) && args.figure.empty())
        throw Error(ErrorKind::Usage, "export: --log-y and --legend-outside shape one --figure");
    auto app = makeApplication(session);
    const auto available = figures::availableFigures(args.run);
    if (args.list) {
        for (const auto& f : available)
            std::printf("%-28s %s\n", f.name.c_str(), f.description.c_str());
        return 0;
    }
    auto formats = formatsNamed(args.formats);
    figures::ViewOptions view;  // as the studio shows it; recorded in the provenance
    view.map.prompt = args.prompt;
    view.map.layer = args.layer;
    view.map.head = args.head;
    view.logY = args.logY;
    view.legendOutside = args.legendOutside;
    const fs::path runDir = fs::path(engine::locateRunFile(args.run)).parent_path();
    if (args.all) {
        const fs::path dir = args.out.empty() ? runDir / "figures" : fs::path(args.out);
        auto names = args.formats;
        if (names.empty())
            names = {"png"};
        for (const auto& file : figures::exportAllFigures(args.run, dir.string(), names, args.dpi))
            if (!args.quiet)
                std::printf("%s\n", file.c_str());
        return 0;
    }
    if (formats.empty()) {
        const auto fromPath = args.out.empty()
                                  ? std::nullopt
                                  : plots::formatFromPath(QString::fromStdString(args.out));
        formats = {fromPath.value_or(plots::Format::Png)};
    }
    for (auto fmt : formats) {
        // Names may contain dots ("scale-x=0.333"): append the extension, never replace it.
        fs::path path =
            args.out.empty()
                ? runDir / "figures" / (figures::figureFileName(args.figure) + "." + extension(fmt))
                : fs::path(args.out);
        if (!args.out.empty() && formats.size() > 1)
            path.replace_extension(extension(fmt));
        exportOne(args.run, args.figure, view, fmt, path, args, fmt == formats.front());
    }
    return 0;
}

void addExportCommand(CLI::App& app, CommandTable& table)
{
    auto a = std::make_shared<ExportArgs>();
    auto* cmd = app.add_subcommand(
        "export",
        "Figures of a run (evaluation, attention, attacks, serial position, loss) or of a "
        "sweep (grid, table) as PNG, SVG, PDF, CSV or pgfplots (tex)");
    cmd->add_option("run", a->run,
                    "Run folder or run.h5, or a sweep folder (figures grid and "
                    "table)");
    cmd->add_option("--from", a->from,
                    "Rebuild the figure a <figure>.provenance.json describes, from the same "
                    "run (exit 3 when it moved or changed)");
    cmd->add_flag("--no-provenance", a->noProvenance,
                  "Write no <figure>.provenance.json beside the figure");
    cmd->add_option("--method", a->method,
                    "Sweep grid / table: evaluation method (default "
                    "ood_length)");
    cmd->add_option("--figure", a->figure, "Figure name (see --list)");
    cmd->add_flag("--log-y", a->logY,
                  "A line figure's y axis on a log scale (the studio's 'log y')");
    cmd->add_flag("--legend-outside", a->legendOutside,
                  "A line figure's legend beside the data instead of over it");
    cmd->add_flag("--all", a->all, "Every available figure (into <run>/figures)");
    cmd->add_flag("--list", a->list, "List the figures this run can draw");
    cmd->add_option("--format", a->formats,
                    "png, svg, pdf, csv, tex (pgfplots code and its .dat "
                    "files; several: comma); a sweep's table: csv, md, json")
        ->delimiter(',');
    cmd->add_flag("--standalone", a->standalone,
                  "tex: a whole document that pdflatex compiles alone "
                  "(else a tikzpicture to \\input)");
    cmd->add_option("--out", a->out, "Output file (one figure) or folder (--all)");
    cmd->add_option("--dpi", a->dpi, "PNG resolution")
        ->capture_default_str()
        ->check(CLI::Range(30, 1200));
    cmd->add_option("--prompt", a->prompt, "Attention map: prompt (from 0)")
        ->capture_default_str()
        ->check(inRange(0, 1e6));
    cmd->add_option("--layer", a->layer, "Attention map: layer from 0 (default -1: last)")
        ->check(inRange(-1, 1e6));
    cmd->add_option("--head", a->head, "Attention map: head from 0, or -1: the mean over heads")
        ->capture_default_str()
        ->check(inRange(-1, 1e6));
    addQuietFlag(cmd, a->quiet);
    table.add(cmd, [a](const Session& session) { return runExport(*a, session); });
}

}  // namespace lengen::cli
