// `lengen note RUN`: a run's notes and tags (issue 41), the command-line side of the studio's
// Notes dialog. Without options it prints them; with options it changes only what they name.

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
    std::string run;
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

int runNote(const NoteArgs& a)
{
    const auto info = engine::readRunInfo(engine::locateRunFile(a.run));
    const bool changes = a.text || a.textFile || a.tags || !a.add.empty() || !a.remove.empty();
    if (!changes) {
        std::printf("tags   %s\n",
                    [&] {
                        std::string j;
                        for (const auto& t : info.tags)
                            j += (j.empty() ? "" : ", ") + t;
                        return j.empty() ? std::string("(none)") : j;
                    }()
                        .c_str());
        std::printf("notes  %s\n", info.notes.empty() ? "(none)" : info.notes.c_str());
        return 0;
    }
    std::optional<std::string> text = a.text;
    if (a.textFile)
        text = readNotesFile(*a.textFile);
    // Applied to the notes as they are under the run's lock, not as read above.
    engine::updateRunNotes(info.path, [&](engine::RunNotes& notes) {
        if (text)
            notes.text = *text;
        if (a.tags)
            notes.tags = engine::splitTags(*a.tags);
        for (const auto& t : a.add)
            for (const auto& tag : engine::splitTags(t))
                notes.tags.push_back(tag);
        for (const auto& t : a.remove)
            for (const auto& tag : engine::splitTags(t))
                notes.tags.erase(std::remove(notes.tags.begin(), notes.tags.end(), tag),
                                 notes.tags.end());
    });
    const auto stored = engine::readRunInfo(info.path);
    std::fprintf(stderr, "%s: %zu tag%s, %zu bytes of notes\n", info.path.c_str(),
                 stored.tags.size(), stored.tags.size() == 1 ? "" : "s", stored.notes.size());
    return 0;
}

}  // namespace

void addNoteCommand(CLI::App& app, CommandTable& table)
{
    auto a = std::make_shared<NoteArgs>();
    auto* note = app.add_subcommand(
        "note",
        "Print or change a run's notes and tags (stored in run.h5 beside the training records; "
        "not while a process trains it: exit 3)");
    note->add_option("run", a->run, "Run folder or run.h5")->required();
    auto* text =
        note->add_option("--text", a->text, "Replace the notes with this text (\"\" clears them)");
    note->add_option("--text-file", a->textFile, "Replace the notes with this file's text")
        ->excludes(text);
    note->add_option("--tags", a->tags,
                     "Replace the tags: a comma-separated list (\"\" clears them)");
    note->add_option("--add-tag", a->add, "Add tags (repeatable, or comma-separated)");
    note->add_option("--remove-tag", a->remove, "Remove tags (repeatable, or comma-separated)");
    table.add(note, [a](const Session&) { return runNote(*a); });
}

}  // namespace lengen::cli
