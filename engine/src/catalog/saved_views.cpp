// Saved views (saved_views.h): the studio's named views, as JSON in its settings and in
// <folder>/lengen-views.json. Every value is checked as it is read: a hand-edited file with a
// wrong type is named with its key, never half applied.
//
// {"format": "lengen-views", "version": 1, "views": [{"name": …, "filter": …,
//   "columns": {"hidden": […], "extra": […], "sort": {…}}, "compare": {…}, "hparams": {…}}]}

#include "lengen/engine/saved_views.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "lengen/engine/errors.h"
#include "lengen/engine/seed_stats.h"
#include "text_files.h"

namespace lengen::engine {

namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* kViewsFormat = "lengen-views";
constexpr int kViewsVersion = 1;
constexpr std::uintmax_t kMaxViewsBytes = 4 * 1024 * 1024;

// Reads values out of one JSON object, naming `where` and the key in every refusal.
struct ViewReader {
    const json& object;
    std::string where;

    [[noreturn]] void refuse(const std::string& key, const std::string& what) const
    {
        throw Error(ErrorKind::Config, where + ": key '" + key + "' " + what);
    }
    const json* find(const std::string& key) const
    {
        const auto it = object.find(key);
        return it == object.end() || it->is_null() ? nullptr : &*it;
    }
    std::string text(const std::string& key, std::string fallback = {}) const
    {
        const auto* v = find(key);
        if (!v)
            return fallback;
        if (!v->is_string())
            refuse(key, "must be text");
        return v->get<std::string>();
    }
    bool flag(const std::string& key, bool fallback) const
    {
        const auto* v = find(key);
        if (!v)
            return fallback;
        if (!v->is_boolean())
            refuse(key, "must be true or false");
        return v->get<bool>();
    }
    double number(const std::string& key, double fallback) const
    {
        const auto* v = find(key);
        if (!v)
            return fallback;
        if (!v->is_number() || !std::isfinite(v->get<double>()))
            refuse(key, "must be a number");
        return v->get<double>();
    }
    std::vector<std::string> texts(const std::string& key) const
    {
        std::vector<std::string> out;
        const auto* v = find(key);
        if (!v)
            return out;
        if (!v->is_array())
            refuse(key, "must be a list of text");
        for (const auto& e : *v) {
            if (!e.is_string())
                refuse(key, "must be a list of text");
            out.push_back(e.get<std::string>());
        }
        return out;
    }
    ViewReader child(const std::string& key) const
    {
        const auto* v = find(key);
        if (v && !v->is_object())
            refuse(key, "must be an object");
        static const json empty = json::object();
        return {v ? *v : empty, where + " " + key};
    }
};

SavedCompare compareFrom(const ViewReader& r)
{
    SavedCompare c;
    c.method = r.text("method");
    c.group = r.text("group", c.group);
    c.keys = r.text("keys");
    c.band = r.text("band", c.band);
    if (!bandKindFromName(c.band))
        r.refuse("band", "must be auto, bootstrap, sd, se or minmax, not '" + c.band + "'");
    c.baselines = r.flag("baselines", false);
    if (r.find("log_y"))
        c.logY = r.flag("log_y", false);
    c.legendOutside = r.flag("legend_outside", true);
    c.smoothing = r.number("smoothing", 0);
    if (c.smoothing < 0 || c.smoothing >= 1)
        r.refuse("smoothing", "must be in [0, 1)");
    c.x = r.text("x", c.x);
    c.runs = r.texts("runs");
    return c;
}

HParamsChoice hparamsFrom(const ViewReader& r)
{
    HParamsChoice h;
    h.axes = r.texts("axes");
    h.color = r.text("color");
    const auto* brushes = r.find("brushes");
    if (brushes && !brushes->is_array())
        r.refuse("brushes", "must be a list");
    for (const auto& b : brushes ? *brushes : json::array()) {
        if (!b.is_object())
            r.refuse("brushes", "must hold objects");
        const ViewReader br{b, r.where + " brushes"};
        if (!br.find("low") || !br.find("high"))
            r.refuse("brushes", "must hold numbers 'low' and 'high'");
        h.brushes.push_back({br.text("column"), br.number("low", 0), br.number("high", 0),
                             br.text("low_category"), br.text("high_category")});
    }
    return h;
}

// A fixed column by its key; a name that is no fixed column's (an extra column's) as it is.
// `renamed` is set where a header of a file written before the keys was read.
std::string columnKey(const std::string& name, bool& renamed)
{
    const auto key = runListColumnKey(name);
    if (key.empty() || key == name)
        return name;
    renamed = true;
    return key;
}

void columnsFrom(const ViewReader& columns, SavedView& v, bool& renamed)
{
    for (const auto& name : columns.texts("hidden"))
        v.hiddenColumns.push_back(columnKey(name, renamed));
    v.extraColumns = columns.texts("extra");
    if (!columns.find("sort"))
        return;
    const auto sort = columns.child("sort");
    v.sortColumn = columnKey(sort.text("column"), renamed);
    const auto order = sort.text("order", "ascending");
    if (order != "ascending" && order != "descending")
        sort.refuse("order", "must be ascending or descending, not '" + order + "'");
    v.sortDescending = order == "descending";
}

SavedView viewFrom(const json& j, const std::string& where, bool& renamed)
{
    if (!j.is_object())
        throw Error(ErrorKind::Config, where + ": a view must be an object");
    const ViewReader r{j, where};
    SavedView v;
    v.name = r.text("name");
    try {
        checkViewName(v.name);
    } catch (const Error&) {
        r.refuse("name", "must name the view: 1 to 80 bytes, no line break");
    }
    v.filter = r.text("filter");
    columnsFrom(r.child("columns"), v, renamed);
    if (r.find("compare"))
        v.compare = compareFrom(r.child("compare"));
    if (r.find("hparams"))
        v.hparams = hparamsFrom(r.child("hparams"));
    return v;
}

json viewJson(const SavedView& v)
{
    json j{{"name", v.name},
           {"filter", v.filter},
           {"columns", {{"hidden", v.hiddenColumns}, {"extra", v.extraColumns}}}};
    if (!v.sortColumn.empty())
        j["columns"]["sort"] = {{"column", v.sortColumn},
                                {"order", v.sortDescending ? "descending" : "ascending"}};
    if (const auto& c = v.compare)
        j["compare"] = {{"method", c->method},
                        {"group", c->group},
                        {"keys", c->keys},
                        {"band", c->band},
                        {"baselines", c->baselines},
                        {"log_y", c->logY ? json(*c->logY) : json()},
                        {"legend_outside", c->legendOutside},
                        {"smoothing", c->smoothing},
                        {"x", c->x},
                        {"runs", c->runs}};
    if (const auto& h = v.hparams) {
        json brushes = json::array();
        for (const auto& b : h->brushes)
            brushes.push_back({{"column", b.column},
                               {"low", b.low},
                               {"high", b.high},
                               {"low_category", b.lowCategory},
                               {"high_category", b.highCategory}});
        j["hparams"] = {{"axes", h->axes}, {"color", h->color}, {"brushes", brushes}};
    }
    return j;
}

}  // namespace

std::string viewsFileFor(const std::string& folder)
{
    return (fs::path(folder) / "lengen-views.json").string();
}

void checkViewName(const std::string& name)
{
    if (name.empty() || name.size() > 80)
        throw Error(ErrorKind::Usage, "a view's name takes 1 to 80 bytes");
    if (std::any_of(name.begin(), name.end(), [](char c) { return (unsigned char)c < 0x20; }))
        throw Error(ErrorKind::Usage, "a view's name holds no line break or control character");
}

std::vector<SavedView> readSavedViews(const std::string& file)
{
    std::error_code ec;
    const auto link = fs::symlink_status(file, ec);
    if (link.type() == fs::file_type::not_found)
        return {};
    // Whatever stands at the name is the user's file, and a damaged one is a config error (exit 2)
    // naming it, as docs/views-format.md says: a dangling or looping link read as "no such view",
    // a FIFO, folder or device as an I/O error (exit 4), an oversized one as a run file's (3).
    const auto target = fs::status(file, ec);
    if (ec || target.type() != fs::file_type::regular)
        throw Error(ErrorKind::Config, file + ": not a views file (" +
                                           (!ec ? std::string("not a regular file")
                                            : link.type() == fs::file_type::symlink
                                                ? "a link that leads nowhere: " + ec.message()
                                                : ec.message()) +
                                           ")");
    json doc;
    try {
        doc = json::parse(readTextFile(file, kMaxViewsBytes));
    } catch (const json::exception& e) {
        throw Error(ErrorKind::Config, file + ": not JSON (" + std::string(e.what()) + ")");
    } catch (const Error& e) {  // unreadable, or larger than any views file
        throw Error(ErrorKind::Config, file + ": not a views file (" + e.what() + ")");
    }
    if (!doc.is_object() || doc.value("format", json()) != kViewsFormat)
        throw Error(ErrorKind::Config,
                    file + ": key 'format' must be \"lengen-views\" (not a views file)");
    if (doc.value("version", json()) != kViewsVersion)
        throw Error(ErrorKind::Config, file + ": key 'version' must be 1 (written by another "
                                              "LenGen?)");
    const auto views = doc.find("views");
    if (views == doc.end() || !views->is_array())
        throw Error(ErrorKind::Config, file + ": key 'views' must be a list");
    std::vector<SavedView> out;
    bool renamed = false;
    for (std::size_t i = 0; i < views->size(); ++i) {
        const std::string where = file + ": views[" + std::to_string(i) + "]";
        out.push_back(viewFrom((*views)[i], where, renamed));
        for (std::size_t j = 0; j + 1 < out.size(); ++j)  // a name is how a view is asked for
            if (out[j].name == out.back().name)
                throw Error(ErrorKind::Config, where + ": key 'name' '" + out.back().name +
                                                   "' is views[" + std::to_string(j) +
                                                   "]'s too; a name must be unique");
    }
    if (renamed) {  // columns by their old headers: written back with keys, once
        try {
            writeSavedViews(file, out);
        } catch (const Error&) {
            // A folder that takes no write keeps its file; it reads the same way each time.
        }
    }
    return out;
}

void writeSavedViews(const std::string& file, const std::vector<SavedView>& views)
{
    json list = json::array();
    for (const auto& v : views)
        list.push_back(viewJson(v));
    const json doc{{"format", kViewsFormat}, {"version", kViewsVersion}, {"views", list}};
    writeFileAtomically(file, doc.dump(2) + "\n", true);
}

bool storeSavedView(const std::string& file, const SavedView& view)
{
    checkViewName(view.name);
    auto views = readSavedViews(file);
    const auto it = std::find_if(views.begin(), views.end(),
                                 [&](const SavedView& v) { return v.name == view.name; });
    const bool replaced = it != views.end();
    if (replaced)
        *it = view;
    else
        views.push_back(view);
    writeSavedViews(file, views);
    return replaced;
}

bool removeSavedView(const std::string& file, const std::string& name)
{
    auto views = readSavedViews(file);
    const auto before = views.size();
    views.erase(std::remove_if(views.begin(), views.end(),
                               [&](const SavedView& v) { return v.name == name; }),
                views.end());
    if (views.size() == before)
        return false;
    writeSavedViews(file, views);
    return true;
}

std::string savedViewJson(const SavedView& view) { return viewJson(view).dump(); }

SavedView savedViewFromJson(const std::string& text, const std::string& where)
{
    bool renamed = false;  // the settings' copy is written with keys at the next save
    try {
        return viewFrom(json::parse(text), where, renamed);
    } catch (const json::exception& e) {
        throw Error(ErrorKind::Config, where + ": not JSON (" + std::string(e.what()) + ")");
    }
}

const SavedView* findView(const std::vector<SavedView>& views, const std::string& name)
{
    for (const auto& v : views)
        if (v.name == name)
            return &v;
    return nullptr;
}

}  // namespace lengen::engine
