#!/usr/bin/env bash
# Structure rules of docs/architecture.md that a grep can keep true (ctest `code_rules`):
#  * HDF5 is called only in engine/src/io/ — one place, under one process-wide lock (Debian's
#    HDF5 is not thread-safe; the studio reads while its worker writes);
#  * engine/ includes no Qt (the CLI and cluster jobs link it alone);
#  * engine/src/config/, sweep/ and catalog/ include no Torch (they build without its paths and
#    its precompiled header, target lengen_engine_core, which lengen-light links alone: this
#    names the line before the compiler);
#  * storage sits below what it stores (issue 73): engine/src/io/ includes, of the engine, only
#    its own headers and the public headers of the layers below it or of its own records
#    (errors, config, run_file, observer, version, hash, and the *_records.h), never a header
#    of eval/, probes, sweep/ or train/ (analysis.h, probes.h, sweep_aggregate.h, run_control.h);
#  * the engine reads the environment in two places only: the session switches
#    (src/session.cpp, sessionSwitchesFromEnvironment) and the PATH lookup
#    (src/sweep/subprocess.cpp); everything else takes its options as values; each program
#    (app/cli, app/gui) reads it in its main.cpp only, and widgets/ never;
#  * no function over 80 lines (its braces at column 0, as every definition here writes them),
#    except the data tables: the encoding table and the intervention table;
#  * no static dialog (QFileDialog::get…, QInputDialog::get…, QMessageBox::question/…) and no
#    exec()'d one (a menu's exec(pos) too: popup() it), except a destructive confirmation marked "// modal: destructive" on the line
#    before: the studio asks through widgets/panels/shared/ask.h (open(), an answer callback);
#  * the root holds the repository's own entries only (allowed_root), not a run's leftovers;
#  * every C++ source formatted as .clang-format says (clang-format-14 --dry-run).
#   code_rules.sh SOURCE_DIR
set -uo pipefail
root=${1:?usage: code_rules.sh SOURCE_DIR}
cd "$root" || exit 2
status=0
h5=$(grep -rnE '(^|[^A-Za-z_0-9])H5[A-Z][A-Za-z_0-9]*[[:space:]]*\(|#[[:space:]]*include[[:space:]]*[<"]hdf5' \
        --include='*.cpp' --include='*.h' engine widgets app tests bench | grep -v '^engine/src/io/')
if [ -n "$h5" ]; then
    echo "HDF5 called outside engine/src/io/ (add a function to io/ instead):"
    echo "$h5"
    status=1
fi
qt=$(grep -rnE '#[[:space:]]*include[[:space:]]*<(Q[A-Za-z]|Qt)' --include='*.cpp' --include='*.h' engine)
if [ -n "$qt" ]; then
    echo "Qt included in engine/ (the engine is Qt-free):"
    echo "$qt"
    status=1
fi
torch=$(grep -rnE '#[[:space:]]*include[[:space:]]*[<"](torch/|ATen/|c10/|torch_compat|torch_pch|model/|train/|eval/|data/|interop/)' \
        --include='*.cpp' --include='*.h' engine/src/config engine/src/sweep engine/src/catalog engine/include |
        grep -v '"train/memory_estimate\.h"')  # sizes and texts, in lengen_engine_core
if [ -n "$torch" ]; then
    echo "Torch (or a Torch-using engine folder) included in config/, sweep/, catalog/ or the public headers:"
    echo "$torch"
    status=1
fi
upward=$(grep -rnE '#[[:space:]]*include[[:space:]]*"' --include='*.cpp' --include='*.h' engine/src/io |
         grep -vE '#[[:space:]]*include[[:space:]]*"(io/[a-z_0-9]+\.h|lengen/engine/(errors|config|run_file|observer|version|hash|[a-z_]+_records)\.h)"')
if [ -n "$upward" ]; then
    echo "engine/src/io/ includes a header above it (put the stored types in a *_records.h, or in io's own record structs):"
    echo "$upward"
    status=1
fi
env=$(grep -rnE '(^|[^A-Za-z_0-9])(std::)?(secure_)?getenv[[:space:]]*\(' --include='*.cpp' --include='*.h' engine |
      grep -vE '^engine/src/(session\.cpp|sweep/subprocess\.cpp):')
if [ -n "$env" ]; then
    echo "the environment read in the engine outside the session switches and the PATH lookup:"
    echo "$env"
    status=1
fi
appenv=$(grep -rnE '(^|[^A-Za-z_0-9])((std::)?(secure_)?getenv|qgetenv|qEnvironmentVariable(IsEmpty|IsSet)?)[[:space:]]*\(|systemEnvironment[[:space:]]*\(' \
         --include='*.cpp' --include='*.h' app widgets | grep -vE '^app/(cli|gui)/main\.cpp:')
if [ -n "$appenv" ]; then
    echo "the environment read in app/ or widgets/ outside each program's main.cpp (read it there, pass it as a value):"
    echo "$appenv"
    status=1
fi
# std::filesystem::remove_all can bind to a broken copy in PyPI's LibTorch (engine/src/file_tree.h).
removeall=$(grep -rnE 'remove_all[[:space:]]*\(' --include='*.cpp' --include='*.h' engine widgets app)
if [ -n "$removeall" ]; then
    echo "std::filesystem::remove_all in the code (use engine's removeTree, file_tree.h):"
    echo "$removeall"
    status=1
fi
long=$(git ls-files 'engine/*.cpp' 'engine/*.h' 'widgets/*.cpp' 'widgets/*.h' 'app/*.cpp' 'app/*.h' 2>/dev/null |
       xargs -r awk 'FNR == 1 { open = 0 }
                     /^\{$/ { open = FNR; sig = prev }
                     /^\}/ { if (open) { n = FNR - open + 2; if (n > 80) printf "%s:%d: %d lines: %s\n", FILENAME, open - 1, n, sig; open = 0 } }
                     { prev = $0 }' |
       grep -vE '^engine/src/config/encodings\.cpp:[0-9]+: [0-9]+ lines: std::vector<EncodingInfo> makeTable\(\)$|^engine/src/eval/intervention_table\.cpp:[0-9]+: [0-9]+ lines: const std::vector<Row>& rows\(\)$')
if [ -n "$long" ]; then
    echo "functions over 80 lines (split them by what they do: compute, then show; build…() parts; data tables are listed in this script):"
    echo "$long"
    status=1
fi
# Static dialogs spin an event loop of their own (docs/architecture.md): only a destructive
# confirmation may, and says so on the line before ("// modal: destructive ...").
modal=$(git ls-files 'widgets/*.cpp' 'widgets/*.h' 'app/*.cpp' 'app/*.h' 2>/dev/null |
        xargs -r awk '/(QFileDialog::get|QInputDialog::get|QColorDialog::get|QFontDialog::get|QMessageBox::(question|warning|information|critical|about))|[.>]exec\(/ {
                          if (prev !~ /modal: destructive/ && $0 !~ /app\.exec\(\)/ && $0 !~ /^[[:space:]]*\/\//) printf "%s:%d: %s\n", FILENAME, FNR, $0 }
                      { prev = $0 }')
if [ -n "$modal" ]; then
    echo "a static or exec()'d dialog outside a destructive confirmation (ask.h opens without a nested loop):"
    echo "$modal"
    status=1
fi
# The repository's root holds what its README, build and CI need, nothing a run left behind (a
# stray `train_kill.err` was committed once: issue 82). A new top-level entry is added here.
allowed_root='^(\.ci|\.clang-format|\.editorconfig|\.gitignore|CMakeLists\.txt|README\.md|app|bench|cmake|configs|docs|engine|python|tests|tools|widgets)$'
stray=$(git ls-files 2>/dev/null | cut -d/ -f1 | sort -u | grep -vE "$allowed_root")
if [ -n "$stray" ]; then
    echo "at the repository's root, not one of its entries (remove it, or add it to allowed_root in tests/code_rules.sh):"
    echo "$stray"
    status=1
fi
# Formatting: every tracked C++ source as .clang-format says, with Debian 12's clang-format-14
# (another version lays some constructs out differently). A dry run: about 2 s.
files=$(git ls-files 'engine/*.cpp' 'engine/*.h' 'widgets/*.cpp' 'widgets/*.h' 'app/*.cpp' 'app/*.h' \
        'tests/*.cpp' 'tests/*.h' 'bench/*.cpp' 'bench/*.h' 2>/dev/null)
if ! command -v clang-format-14 >/dev/null; then
    echo "clang-format-14 is missing (.ci/install-deps installs it): the formatting is not checked"
    status=1
elif unformatted=$(echo "$files" | xargs -r clang-format-14 --dry-run 2>&1 | grep -E '^[^ ]+:[0-9]+:[0-9]+: warning' |
                   cut -d: -f1,2 | sort -u -t: -k1,1); [ -n "$unformatted" ]; then
    echo "not formatted as .clang-format says (clang-format-14 -i FILE; the first line of each):"
    echo "$unformatted"
    status=1
fi
[ $status -ne 0 ] || echo "code rules hold: HDF5 only in engine/src/io/, io includes nothing above it, no Qt in engine/, no Torch in config/, sweep/, catalog/ or the public headers, getenv only in the session switches, the PATH lookup and each main.cpp, no function over 80 lines, no nested dialog loop outside destructive confirmations, nothing stray at the root, formatted"
exit $status
