// `lengen note RUN...`: runs' notes and tags (issue 41), the command-line side of the studio's
// Notes dialog. Without options it prints them; with options it changes only what they name,
// on every run given (issue 55: tags on many runs in one step).

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>

#include "command_registry.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/run_file.h"

namespace lengen::cli {

namespace {

struct NoteArgs {
    std::vector<std::string> runs;
    std::optional<std::string> text, textFile, tags;
    std::vector<std::string> add, remove;
};

// The text of --text-file, refused before anything changes (exit 64) unless it is a readable
// regular file within the notes' limit: a folder read as "" once wiped a run's notes, and
// /dev/zero was read without end.
std::string readNotesFile(const std::string& path)
{
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
        throw engine::Error(
            engine::ErrorKind::Usage,
            "--text-file: " + path +
                (std::filesystem::exists(path, ec) ? " is not a regular file" : " does not exist") +
                "; the notes are unchanged");
    std::ifstream in(path, std::ios::binary);
    std::string text(engine::kMaxRunNotesBytes + 1, '\0');
    in.read(text.data(), std::streamsize(text.size()));
    if (in.bad() || (!in && !in.eof()))
        throw engine::Error(engine::ErrorKind::Usage,
                            "--text-file: cannot read " + path + "; the notes are unchanged");
    text.resize(size_t(in.gcount()));
    if (text.size() > engine::kMaxRunNotesBytes)
        throw engine::Error(engine::ErrorKind::Usage,
                            "--text-file: " + path + " holds more than " +
                                std::to_string(engine::kMaxRunNotesBytes) +
                                " bytes, the most a run keeps; the notes are unchanged");
    return text;
}

void printNotes(const engine::RunFileInfo& info, bool named)
{
    if (named)
        std::printf("%s\n", info.path.c_str());
    std::string tags;
    for (const auto& t : info.tags)
        tags += (tags.empty() ? "" : ", ") + t;
    std::printf("tags   %s\n", tags.empty() ? "(none)" : tags.c_str());
    std::printf("notes  %s\n", info.notes.empty() ? "(none)" : info.notes.c_str());
}

int runNote(const NoteArgs& a)
{
    // Every run located first: a missing one (exit 3) is named before any run changes.
    std::vector<std::string> paths;
    for (const auto& run : a.runs)
        paths.push_back(engine::locateRunFile(run));
    const bool changes = a.text || a.textFile || a.tags || !a.add.empty() || !a.remove.empty();
    if (!changes) {
        for (const auto& path : paths)
            printNotes(engine::readRunInfo(path), paths.size() > 1);
        return 0;
    }
    std::optional<std::string> text = a.text;
    if (a.textFile)
        text = readNotesFile(*a.textFile);
    // Applied to each run's notes as they are under its lock. A run that refuses (a process
    // trains it) is said and the others still change; the exit code is the first refusal's.
    int code = 0;
    for (const auto& path : paths) {
        engine::RunNotes stored;
        try {
            stored = engine::updateRunNotes(path, [&](engine::RunNotes& notes) {
                if (text)
                    notes.text = *text;
                if (a.tags)
                    notes.tags = engine::splitTags(*a.tags);
                engine::editTags(notes, a.add, a.remove);
            });
        } catch (const engine::Error& e) {
            if (paths.size() == 1)
                throw;
            std::fprintf(stderr, "lengen: error: %s\n", e.what());
            if (code == 0)
                code = engine::exitCodeFor(e.kind());
            continue;
        }
        // Not read back: another `lengen note` may hold the file open for writing by now.
        std::fprintf(stderr, "%s: %zu tag%s, %zu bytes of notes\n", path.c_str(),
                     stored.tags.size(), stored.tags.size() == 1 ? "" : "s", stored.text.size());
    }
    return code;
}

}  // namespace

void addNoteCommand(CLI::App& app, CommandTable& table)
{
    auto a = std::make_shared<NoteArgs>();
    auto* note = app.add_subcommand(
        "note",
        "Print or change runs' notes and tags (stored in run.h5 beside the training records; "
        "not while a process trains a run: exit 3, the other runs still change)");
    note->add_option("runs", a->runs, "Run folders or run.h5 files")->required();
    auto* text =
        note->add_option("--text", a->text, "Replace the notes with this text (\"\" clears them)");
    note->add_option("--text-file", a->textFile, "Replace the notes with this file's text")
        ->excludes(text);
    note->add_option("--tags", a->tags,
                     "Replace the tags: a comma-separated list (\"\" clears them)");
    // One value each time (repeat the option): `--add-tag x RUN1 RUN2` leaves the runs as runs.
    note->add_option("--add-tag", a->add, "Add tags (repeatable, or comma-separated)")
        ->allow_extra_args(false);
    note->add_option("--remove-tag", a->remove, "Remove tags (repeatable, or comma-separated)")
        ->allow_extra_args(false);
    table.add(note, [a](const Session&) { return runNote(*a); });
}

}  // namespace lengen::cli
