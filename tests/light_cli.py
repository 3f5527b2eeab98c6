#!/usr/bin/env python3
"""Issue 82 §1: the commands that only read or move runs run in lengen-light, which has no
LibTorch, and a user cannot tell: every light command prints the same bytes, on the same
streams, with the same exit code as lengen-core, which holds every command.

    light_cli.py PATH/TO/lengen WORK_DIR

1. Each light command's --help, usage errors and damaged-input errors: lengen-light and
   lengen-core byte for byte (stdout, stderr, exit code).
2. The same on a real folder: a tiny run trained and evaluated, a sweep made with `sweep new`:
   runs (text, json, csv), info (with --parameters, --pointwise), note, jobs, validate, list,
   sweep status and table.
3. `lengen runs` maps no LibTorch library (ld.so's own account, LD_DEBUG=libs), while
   `lengen train --help` does (the check can fail), and the launcher sends each light command
   to lengen-light and the rest to lengen-core.
"""
import glob
import os
import re
import shutil
import subprocess
import sys


def launcher_table(name):
    """The words of one of the launcher's tables (app/cli/launcher.cpp: kLight, kLightSweep),
    read from its source, so that a command added there is checked here."""
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "app", "cli",
                       "launcher.cpp")
    text = open(src).read()
    body = re.search(r"\b" + name + r"\[\]\s*=\s*\{(.*?)\};", text, re.S).group(1)
    return re.findall(r'"([^"]+)"', body)


LIGHT = launcher_table("kLight")
LIGHT_SWEEP = launcher_table("kLightSweep")

TINY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "support", "tiny.yaml")
failures = []


def run(exe, args, env=None):
    # argv[0] "lengen" for both, as the launcher keeps it: usage lines name it.
    out = subprocess.run(["lengen", *args], executable=exe, capture_output=True, timeout=120,
                         env=env, stdin=subprocess.DEVNULL)
    return out.returncode, out.stdout, out.stderr


def same(core, light, args):
    a, b = run(core, args), run(light, args)
    if a != b:
        failures.append(f"`lengen {' '.join(args)}`: lengen-core exit {a[0]}, lengen-light exit "
                        f"{b[0]}\n  core  out {a[1][:300]!r} err {a[2][:300]!r}\n"
                        f"  light out {b[1][:300]!r} err {b[2][:300]!r}")
    return a


def libraries_loaded(lengen, args, work):
    """The shared libraries ld.so loaded for `lengen ARGS` (the launcher is static: these are
    the program it executed)."""
    for old in glob.glob(os.path.join(work, "ld.*")):
        os.remove(old)
    env = dict(os.environ, LD_DEBUG="libs", LD_DEBUG_OUTPUT=os.path.join(work, "ld"))
    code = run(lengen, args, env)[0]
    text = "".join(open(f, errors="replace").read() for f in glob.glob(os.path.join(work, "ld.*")))
    if not text:
        failures.append(f"`lengen {' '.join(args)}` (exit {code}): ld.so wrote no account")
    return text


def main():
    lengen, work = sys.argv[1], sys.argv[2]
    folder = os.path.dirname(os.path.abspath(lengen))
    core, light = os.path.join(folder, "lengen-core"), os.path.join(folder, "lengen-light")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)

    # 1. Help and errors, no files needed.
    words = [[c] for c in LIGHT] + [["sweep", c] for c in LIGHT_SWEEP]
    for w in words:
        same(core, light, w + ["--help"])
        same(core, light, w + ["--no-such-flag"])
    missing = os.path.join(work, "missing")
    for args in (["info", missing], ["runs", missing], ["note", missing], ["validate", missing],
                 ["delete", "--yes", missing], ["archive", "--yes", missing],
                 ["sweep", "status", missing], ["sweep", "table", missing], ["stop", missing],
                 ["info", ""], ["runs", "--where", "status=="], ["list", "nothing"]):
        same(core, light, args)

    # 2. A real run and a sweep.
    cfg = os.path.join(work, "tiny.yaml")
    shutil.copy(TINY, cfg)
    runs = os.path.join(work, "runs")
    rc, out, err = run(lengen, ["train", cfg, "--out", runs, "--quiet"])
    if rc != 0:
        sys.exit(f"training the tiny run failed ({rc}): {err.decode()}")
    run_file = out.decode().split()[-1]
    subprocess.run([lengen, "eval", run_file, "--methods", "standard", "--prompts", "8",
                    "--bootstrap", "5", "--quiet"], check=True, capture_output=True)
    # `sweep new` by each into a folder of its own: the same output and files, but the name.
    sweep, made = os.path.join(work, "sweep"), {}
    for exe, name in ((core, "sweep"), (light, "sweep-light")):
        out = run(exe, ["sweep", "new", cfg, "--pe", "rope,nope", "--seeds", "2", "--out",
                        os.path.join(work, name)])
        files = sorted(os.path.relpath(p, os.path.join(work, name)) for p in
                       glob.glob(os.path.join(work, name, "**"), recursive=True))
        def plain(text, name=name):
            return text.replace(os.path.join(work, name).encode(), b"FOLDER").replace(
                f"sweep {name}:".encode(), b"sweep NAME:")
        made[name] = (out[0], plain(out[1]), plain(out[2]), files)
    if made["sweep"] != made["sweep-light"]:
        failures.append(f"`sweep new` differs: {made}")
    same(core, light, ["sweep", "new", cfg, "--pe", "rope", "--out", sweep])  # exists
    for args in (["runs", runs], ["runs", runs, "--format", "json"],
                 ["runs", runs, "--format", "csv", "--columns", "run,pe,steps"],
                 ["runs", runs, "--where", "pe=rope"], ["info", run_file],
                 ["info", "--parameters", run_file], ["info", "--pointwise", "2", run_file],
                 ["note", run_file], ["jobs", runs], ["jobs", runs, "--json"],
                 ["validate", cfg], ["list", "encodings"], ["list", "interventions"],
                 ["list", "tasks"], ["sweep", "status", sweep], ["sweep", "status", sweep,
                                                                 "--json"],
                 ["sweep", "table", sweep], ["sweep", "table", sweep, "--format", "csv"]):
        same(core, light, args)
    if run(lengen, ["runs", runs]) != run(core, ["runs", runs]):
        failures.append("`lengen runs` through the launcher differs from lengen-core's")

    # 3. What each command loads.
    if "libtorch" in libraries_loaded(lengen, ["runs", runs], work):
        failures.append("`lengen runs` loaded LibTorch: the launcher ran lengen-core, or "
                        "lengen-light links it")
    if "libtorch" not in libraries_loaded(lengen, ["train", "--help"], work):
        failures.append("`lengen train --help` loaded no LibTorch: the check cannot tell")
    for args in (["info", run_file], ["sweep", "status", sweep], ["--version"]):
        if "libtorch" in libraries_loaded(lengen, args, work):
            failures.append(f"`lengen {' '.join(args)}` loaded LibTorch")

    for f in failures:
        print("FAIL:", f)
    print(f"{len(words)} light commands, {len(failures)} difference(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
