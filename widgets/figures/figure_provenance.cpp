#include "figure_provenance.h"

#include "compare_logged.h"

#include "compare_figure.h"

#include <QColor>
#include <QDateTime>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSaveFile>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "lengen/engine/analysis.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/hash.h"
#include "lengen/engine/run_file.h"
#include "lengen/engine/sweep.h"
#include "lengen/engine/version.h"

namespace lengen::figures {

namespace {

using engine::Error;
using engine::ErrorKind;
namespace fs = std::filesystem;

constexpr int kProvenanceVersion = 1;
const char* kFormat = "lengen-figure-provenance";

QString qs(const std::string& s) { return QString::fromStdString(s); }

// The evaluations a figure drew, as its provenance lists them.
QJsonArray evaluationsJson(const std::vector<DrawnEvaluation>& drawn)
{
    QJsonArray out;
    for (const auto& d : drawn) {
        QJsonObject e;
        e["method"] = qs(d.method);
        e["source"] = qs(d.source);
        e["prompts"] = d.prompts;
        e["eval_seed"] = QString::number(d.seed);  // uint64: as text, JSON numbers are doubles
        e["points"] = d.points;
        e["train_points"] = d.trainPoints;      // the curriculum's end: the lengths' base
        e["trained_points"] = d.trainedPoints;  // what the weights last trained on: the marker
        e["checkpoint_step"] = double(d.checkpointStep);
        e["intervention"] = qs(d.intervention);
        e["intervention_params"] = qs(d.interventionParams);
        QJsonArray curves;
        for (const auto& c : d.curves)
            curves.append(qs(c));
        e["curves"] = curves;
        out.append(e);
    }
    return out;
}

// The evaluations a figure recorded against those stored now: the same list, each recorded key
// with the same value (keys a later LenGen records, such as trained_points, are not asked of
// files written before it).
bool sameEvaluations(const QJsonArray& recorded, const QJsonArray& now)
{
    if (recorded.size() != now.size())
        return false;
    for (int i = 0; i < recorded.size(); ++i) {
        const auto r = recorded[i].toObject(), n = now[i].toObject();
        for (auto it = r.begin(); it != r.end(); ++it)
            if (n.value(it.key()) != it.value())
                return false;
    }
    return true;
}

}  // namespace

void applyView(plots::FigureSpec& spec, const ViewOptions& view)
{
    auto& series = spec.series;
    series.erase(std::remove_if(series.begin(), series.end(),
                                [&](const plots::Series& s) {
                                    return view.hidden.contains(QString::fromStdString(s.name));
                                }),
                 series.end());
    if (view.logY) {
        spec.y.log = true;
        spec.y.min.reset();  // a fixed lower bound at or below 0 has no log
        spec.y.max.reset();
    }
    if (view.legendOutside && spec.legend != plots::LegendPlace::None)
        spec.legend = plots::LegendPlace::OutsideRight;
    for (auto& s : series)
        if (const auto it = view.colors.find(s.name); it != view.colors.end())
            s.color = it->second;
}

std::map<std::string, std::string> seriesColors(const plots::FigureSpec& spec)
{
    std::map<std::string, std::string> out;
    for (const auto& s : spec.series)
        if (!s.name.empty() && !s.color.empty())
            out.emplace(s.name, s.color);
    return out;
}

std::string configHash(const std::string& configYaml)
{
    const std::uint64_t h = engine::fnv1a64(configYaml);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    return std::string("fnv1a64:") + buf;
}

namespace {

QJsonObject runRecord(const engine::RunFileInfo& info)
{
    QJsonObject r;
    r["path"] = qs(fs::absolute(info.path).lexically_normal().string());
    r["run_id"] = qs(info.runId);
    r["seed"] = QString::number(info.seed);
    r["config_hash"] = qs(configHash(info.configYaml));
    r["checkpoint_step"] = double(info.checkpointStep);
    // The curriculum it reached (issue 52): the training length its figures mark.
    QJsonObject reached;
    reached["steps"] = double(info.reached.stepsDone);
    reached["points"] = info.reached.points;
    reached["dims"] = info.reached.dims;
    reached["source"] = qs(info.reached.source);
    r["curriculum_reached"] = reached;
    return r;
}

// The view options as a provenance's "view" records them; readView is the inverse.
QJsonObject viewJson(const ViewOptions& v)
{
    QJsonObject view;
    view["prompt"] = v.map.prompt;
    view["layer"] = v.map.layer;
    view["head"] = v.map.head;
    view["hidden_curves"] = QJsonArray::fromStringList(v.hidden);
    view["log_y"] = v.logY;
    view["legend_outside"] = v.legendOutside;
    if (!v.colors.empty()) {
        QJsonObject colors;
        for (const auto& [name, color] : v.colors)
            colors[qs(name)] = qs(color);
        view["curve_colors"] = colors;
    }
    return view;
}

ViewOptions readView(const QJsonObject& view)
{
    ViewOptions v;
    v.map.prompt = view["prompt"].toInt(0);
    v.map.layer = view["layer"].toInt(-1);
    v.map.head = view["head"].toInt(0);
    for (const auto& h : view["hidden_curves"].toArray())
        v.hidden << h.toString();
    v.logY = view["log_y"].toBool(false);
    v.legendOutside = view["legend_outside"].toBool(false);
    const auto colors = view["curve_colors"].toObject();
    for (auto it = colors.begin(); it != colors.end(); ++it)
        if (const QString c = it.value().toString();
            c.size() == 7 && c.startsWith('#') && QColor(c).isValid())
            v.colors.emplace(it.key().toStdString(), c.toStdString());
    return v;
}

}  // namespace

void stampProvenance(QJsonObject& p)
{
    p["format"] = kFormat;
    p["version"] = kProvenanceVersion;
    p["lengen"] = engine::versionString();
    p["libtorch"] = qs(engine::libTorchVersion());
    p["created"] = QDateTime::currentDateTimeUtc().toString(Qt::ISODate);
}

namespace {
void stamp(QJsonObject& p) { stampProvenance(p); }
}  // namespace

QJsonObject multiRunProvenance(const std::vector<FigureSources>& drawn, const std::string& method,
                               const QJsonObject& grouping, const ViewOptions& shown)
{
    QJsonArray records, evaluations;
    for (const auto& source : drawn) {
        records.append(runRecord(source.run));
        for (const auto& e : evaluationsJson(source.evaluations)) {
            auto o = e.toObject();
            o["run_id"] = qs(source.run.runId);
            evaluations.append(o);
        }
    }
    QJsonObject view = viewJson(shown);
    view["figure"] = qs("compare:" + method);
    QJsonObject p;
    stamp(p);
    p["runs"] = records;
    p["evaluations"] = evaluations;
    p["grouping"] = grouping;
    p["view"] = view;
    return p;
}

QJsonObject sweepGridProvenance(const std::string& sweepDir, const std::string& method,
                                const engine::SweepAggregate& aggregate, const std::string& band)
{
    const engine::SweepPaths paths{engine::locateSweep(sweepDir)};
    QJsonArray records;
    for (const auto& set : aggregate.sets) {
        if (set.kind != "eval" || set.name != method)
            continue;
        for (const auto& cell : set.cells) {
            auto r = runRecord(engine::readRunInfo(paths.runFile(cell)));
            r["cell"] = qs(cell);
            records.append(r);
        }
    }
    QJsonObject grouping;
    QJsonArray by;
    for (const auto& k : aggregate.groupBy)
        by.append(qs(k));
    grouping["by"] = by;
    grouping["band"] = qs(band);
    grouping["bootstrap_trials"] = aggregate.bootstrapTrials;
    QJsonObject view;
    view["figure"] = "sweep-grid";
    view["sweep"] = qs(fs::absolute(paths.root).lexically_normal().string());
    view["method"] = qs(method);
    QJsonObject p;
    stamp(p);
    p["runs"] = records;
    p["grouping"] = grouping;
    p["view"] = view;
    return p;
}

QJsonObject figureProvenance(const FigureSources& sources, const std::string& name,
                             const ViewOptions& shown)
{
    QJsonObject view = viewJson(shown);
    view["figure"] = qs(name);
    QJsonObject p;
    stamp(p);
    p["runs"] = QJsonArray{runRecord(sources.run)};
    p["view"] = view;
    p["evaluations"] = evaluationsJson(sources.evaluations);
    return p;
}

std::string writeProvenance(const std::string& figurePath, const QJsonObject& given,
                            bool standalone)
{
    const fs::path fig(figurePath);
    // The file's format, so that a rebuild writes the same kind by default (issue 52: a .tex lost
    // its --standalone, an --out without extension got PNG bytes).
    QJsonObject provenance = given;
    QJsonObject view = provenance["view"].toObject();
    std::string ext = fig.extension().string();
    if (!ext.empty())
        ext.erase(0, 1);
    std::transform(ext.begin(), ext.end(), ext.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    view["format"] = qs(ext);
    if (ext == "tex")
        view["standalone"] = standalone;
    provenance["view"] = view;
    const auto path = (fig.parent_path() / (fig.stem().string() + ".provenance.json")).string();
    QSaveFile f(qs(path));  // written beside, renamed into place
    if (!f.open(QIODevice::WriteOnly) || f.write(QJsonDocument(provenance).toJson()) < 0 ||
        !f.commit())
        throw Error(ErrorKind::Io, "cannot write " + path + ": " + f.errorString().toStdString());
    return path;
}

namespace {

// Where in `v` the value `marker` stands, as a key path ("grouping.smoothing", "runs[0].path").
QString pathOf(const QJsonValue& v, const QString& marker, const QString& at = {})
{
    if (v.isString() && v.toString() == marker)
        return at;
    QString found;
    const auto object = v.toObject();
    for (auto it = object.begin(); it != object.end() && found.isEmpty(); ++it)
        found = pathOf(it.value(), marker, at.isEmpty() ? it.key() : at + "." + it.key());
    const auto list = v.toArray();
    for (qsizetype i = 0; i < list.size() && found.isEmpty(); ++i)
        found = pathOf(list[i], marker, at + "[" + QString::number(i) + "]");
    return found;
}

// The key of a number JSON cannot hold (NaN, Infinity, 1e999), which Qt reports by its offset
// alone: the token there is put in quotes as a marker, and the key found holding it (issue 81:
// "illegal number" named no key). "" where the text is broken elsewhere too.
std::string illegalNumberKey(QByteArray text, int offset, std::string* token)
{
    auto ends = [&](int i) { return i >= text.size() || std::strchr(" \t\r\n,}]", text[i]); };
    int t = offset;
    while (t > 0 && ends(t))  // Qt points at the token or just after it
        --t;
    int start = t, end = t;
    while (start > 0 && !std::strchr(" \t\r\n:,[{", text[start - 1]))
        --start;
    while (!ends(end))
        ++end;
    *token = text.mid(start, end - start).toStdString();
    const QString marker = QStringLiteral("lengen: the illegal number");
    text.replace(start, end - start, "\"" + marker.toUtf8() + "\"");
    QJsonParseError err{};
    const auto doc = QJsonDocument::fromJson(text, &err);
    if (err.error != QJsonParseError::NoError)
        return {};
    return pathOf(doc.object(), marker).toStdString();
}

// The provenance file's JSON, refused (exit 64) unless it is a readable regular file of this
// format and version (a FIFO would block the read).
QJsonObject provenanceDocument(const std::string& path)
{
    QFile f(qs(path));
    if (!QFileInfo(qs(path)).isFile() || !f.open(QIODevice::ReadOnly))
        throw Error(ErrorKind::Usage,
                    "--from " + path + ": cannot read it (not a readable regular file)");
    QJsonParseError err{};
    const auto text = f.readAll();
    const auto p = QJsonDocument::fromJson(text, &err).object();
    std::string token;
    if (err.error == QJsonParseError::IllegalNumber)
        if (const auto key = illegalNumberKey(text, err.offset, &token); !key.empty())
            throw Error(ErrorKind::Usage, "--from " + path + ": key '" + key +
                                              "' must be a finite number, not " + token);
    if (err.error != QJsonParseError::NoError || p["format"].toString() != kFormat)
        throw Error(ErrorKind::Usage, "--from " + path + ": not a LenGen figure provenance file" +
                                          (err.error != QJsonParseError::NoError
                                               ? " (" + err.errorString().toStdString() + ")"
                                               : std::string()));
    if (p["version"].toInt() != kProvenanceVersion)
        throw Error(ErrorKind::Usage, "--from " + path + ": provenance version " +
                                          std::to_string(p["version"].toInt()) +
                                          " (this LenGen reads " +
                                          std::to_string(kProvenanceVersion) + ")");
    return p;
}

// The one check every figure kind makes of a run it drew (issue 71): runs[index].path is
// still there, a regular file (a FIFO, a device or a folder is refused before it is read), a
// LenGen run, and the run the figure recorded (its id). Exit 3 (RunFile) naming the entry.
engine::RunFileInfo locatedRun(const std::string& path, const QJsonObject& r, int index)
{
    const std::string run = r["path"].toString().toStdString();
    const std::string id = r["run_id"].toString().toStdString();
    const std::string entry = "--from " + path + ": runs[" + std::to_string(index) + "] (run " +
                              (id.empty() ? std::string("?") : id) + ")";
    std::error_code ec;
    if (run.empty() || !fs::exists(run, ec))
        throw Error(ErrorKind::RunFile, "--from " + path + ": run " + id + " is no longer at " +
                                            run + " (moved or deleted)");
    if (const auto type = fs::status(run, ec).type(); type != fs::file_type::regular)
        throw Error(ErrorKind::RunFile, entry + ": " + run + " is not a regular file (" +
                                            (type == fs::file_type::directory ? "a folder"
                                             : type == fs::file_type::fifo    ? "a FIFO"
                                             : type == fs::file_type::socket  ? "a socket"
                                                                              : "a device") +
                                            ")");
    engine::RunFileInfo info;
    try {
        info = engine::readRunInfo(run);
    } catch (const std::exception& e) {
        throw Error(ErrorKind::RunFile,
                    entry + ": " + run + " is not a LenGen run (" + e.what() + ")");
    }
    if (!id.empty() && info.runId != id)
        throw Error(ErrorKind::RunFile, entry + ": " + run + " holds run " + info.runId +
                                            ", not the one the figure drew");
    return info;
}

// A run the figure drew, where it was and unchanged: its path.
std::string checkedRun(const std::string& path, const QJsonObject& r, int index)
{
    const std::string run = r["path"].toString().toStdString();
    const auto info = locatedRun(path, r, index);
    const auto hash = configHash(info.configYaml);
    if (hash != r["config_hash"].toString().toStdString() ||
        info.runId != r["run_id"].toString().toStdString())
        throw Error(ErrorKind::RunFile, "--from " + path + ": run " + run +
                                            " changed since the figure was made (config hash " +
                                            hash + ", run id " + info.runId +
                                            "; the figure recorded " +
                                            r["config_hash"].toString().toStdString() + ", " +
                                            r["run_id"].toString().toStdString() + ")");
    if (r.contains("checkpoint_step") &&
        qint64(r["checkpoint_step"].toDouble()) != info.checkpointStep)
        throw Error(ErrorKind::RunFile,
                    "--from " + path + ": run " + run +
                        " was trained further since the figure "
                        "was made (checkpoint " +
                        std::to_string(info.checkpointStep) + ", recorded " +
                        std::to_string(qint64(r["checkpoint_step"].toDouble())) + ")");
    return run;
}

// The view options the figure was drawn with.
void recordedView(const QJsonObject& view, FigureSource& s)
{
    s.format = view["format"].toString().toStdString();
    s.standalone = view["standalone"].toBool(false);
    s.view = readView(view);
}

// A sweep's grid: every cell's run unchanged.
FigureSource gridSource(const std::string& path, const QJsonObject& p)
{
    const auto view = p["view"].toObject();
    FigureSource s;
    int index = 0;
    for (const auto& r : p["runs"].toArray()) {
        checkedRun(path, r.toObject(), index++);
        s.cells.push_back(r.toObject()["cell"].toString().toStdString());
    }
    s.run = view["sweep"].toString().toStdString();
    s.name = "grid";
    s.method = view["method"].toString().toStdString();
    const auto grouping = p["grouping"].toObject();
    for (const auto& k : grouping["by"].toArray())
        s.groupBy.push_back(k.toString().toStdString());
    s.band = grouping["band"].toString().toStdString();
    s.bootstrapTrials = grouping["bootstrap_trials"].toInt(1000);
    recordedView(view, s);
    return s;
}

// Compare: the runs as drawn, each unchanged, and their stored evaluations the ones drawn.
FigureSource compareSource(const std::string& path, const QJsonObject& p)
{
    const auto view = p["view"].toObject();
    const auto runs = p["runs"].toArray();
    FigureSource s;
    s.name = "compare";
    s.method = view["figure"].toString().mid(8).toStdString();
    if (runs.isEmpty())
        throw Error(ErrorKind::Usage,
                    "--from " + path + ": a Compare figure with no run in 'runs'");
    for (int i = 0; i < runs.size(); ++i)
        s.runs.push_back(checkedRun(path, runs[i].toObject(), i));
    QJsonArray drawn;
    for (const auto& e : p["evaluations"].toArray())
        drawn.append(e);
    // What Compare draws from them now, as its builder records it.
    QStringList files;
    for (const auto& r : s.runs)
        files << qs(r);
    QJsonArray now;
    for (const auto& source : ui::compareRuns(files, s.method, false, {}).sources)
        for (const auto& e : evaluationsJson(source.evaluations)) {
            auto o = e.toObject();
            o["run_id"] = qs(source.run.runId);
            now.append(o);
        }
    if (p.contains("evaluations") && !sameEvaluations(drawn, now))
        throw Error(ErrorKind::RunFile,
                    "--from " + path + ": the stored " + s.method +
                        " evaluations of the compared runs changed since the figure was made "
                        "(evaluated again?)");
    const auto grouping = p["grouping"].toObject();
    s.group = grouping["group"].toString("each-run").toStdString();
    for (const auto& k : grouping["keys"].toArray())
        s.keys.push_back(k.toString().toStdString());
    s.band = grouping["band"].toString("auto").toStdString();
    s.baselines = grouping["baselines"].toBool(false);
    // A logged column's controls (issue 72): absent before them, so raw and by step; a value of
    // another type ("0.5", [0.5], 5) is refused as an unknown one is, not read as the default.
    const auto smoothing = grouping["smoothing"], x = grouping["x"];
    s.smoothing = smoothing.toDouble(0);
    if ((!smoothing.isUndefined() && !smoothing.isDouble()) ||
        !(s.smoothing >= 0 && s.smoothing < 1))
        throw Error(ErrorKind::Usage,
                    "--from " + path + ": key 'grouping.smoothing' must be a number in [0, 1)");
    if (!x.isUndefined() && !x.isString())
        throw Error(ErrorKind::Usage, "--from " + path +
                                          ": key 'grouping.x' must be step, relative or wall "
                                          "(a string)");
    s.x = x.toString("step").toStdString();
    if (!ui::loggedXFromName(s.x))
        throw Error(ErrorKind::Usage, "--from " + path +
                                          ": key 'grouping.x' must be step, "
                                          "relative or wall, not '" +
                                          s.x + "'");
    recordedView(view, s);
    return s;
}

// One run's figure: the run unchanged, and the stored results it drew the ones recorded.
FigureSource runSource(const std::string& path, const QJsonObject& p)
{
    const auto view = p["view"].toObject();
    const auto runs = p["runs"].toArray();
    // Each key named on its own: a number in view.figure was once blamed on 'runs'.
    if (!view["figure"].isString())
        throw Error(ErrorKind::Usage,
                    "--from " + path + ": key 'view.figure' must be a figure's name (a string)");
    if (runs.size() != 1)
        throw Error(ErrorKind::Usage, "--from " + path +
                                          ": key 'runs' must hold one run for figure '" +
                                          view["figure"].toString().toStdString() + "'");
    const std::string run = checkedRun(path, runs.first().toObject(), 0);
    // What the figure draws from the run now, as its builder records it, against what it drew.
    const auto same = [&] {
        try {
            return sameEvaluations(
                p["evaluations"].toArray(),
                evaluationsJson(
                    makeFigure(run, view["figure"].toString().toStdString(), readView(view).map)
                        .sources.evaluations));
        } catch (const Error&) {  // the figure cannot be drawn now: its results are gone
            return false;
        }
    };
    if (p.contains("evaluations") && !same())
        throw Error(ErrorKind::RunFile,
                    "--from " + path + ": the stored evaluations of run " + run +
                        " that the figure draws changed since it was made (evaluated again?)");
    FigureSource s;
    s.run = run;
    recordedView(view, s);
    s.name = view["figure"].toString().toStdString();
    return s;
}

// The Hyperparameters view: every run where it was with the same id (read whole again when the
// figure is drawn), the axes, colour and brushes as shown.
FigureSource hparamsSource(const std::string& path, const QJsonObject& p)
{
    const auto view = p["view"].toObject();
    FigureSource s;
    s.name = "hparams";
    const auto runs = p["runs"].toArray();
    for (int i = 0; i < runs.size(); ++i) {  // the one check of every figure kind (issue 71)
        locatedRun(path, runs[i].toObject(), i);
        s.runs.push_back(runs[i].toObject()["path"].toString().toStdString());
    }
    if (s.runs.empty())
        throw Error(ErrorKind::Usage, "--from " + path + ": key 'runs' lists no run");
    for (const auto& a : view["axes"].toArray())
        s.hparams.axes.push_back(a.toObject()["column"].toString().toStdString());
    s.hparams.color = view["color"].toString().toStdString();
    for (const auto& b : view["brushes"].toArray()) {
        const auto o = b.toObject();
        if (!o["low"].isDouble() || !o["high"].isDouble())
            throw Error(ErrorKind::Usage, "--from " + path +
                                              ": key 'view.brushes' must hold numbers 'low' "
                                              "and 'high'");
        s.hparams.brushes.push_back({o["column"].toString().toStdString(), o["low"].toDouble(),
                                     o["high"].toDouble(),
                                     o["low_category"].toString().toStdString(),
                                     o["high_category"].toString().toStdString()});
    }
    recordedView(view, s);
    return s;
}

}  // namespace

FigureSource readProvenance(const std::string& path)
{
    const auto p = provenanceDocument(path);
    const QString figure = p["view"].toObject()["figure"].toString();
    if (figure == "sweep-grid")
        return gridSource(path, p);
    if (figure.startsWith("compare:"))
        return compareSource(path, p);
    if (figure == "hparams")
        return hparamsSource(path, p);
    return runSource(path, p);
}

}  // namespace lengen::figures
