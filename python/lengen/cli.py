"""The `lengen` command line, which the catalog goes through so that a filter, a view or a
column means one thing in the CLI, the studio and here.

The CLI is the one named by the LENGEN environment variable, else `lengen` on PATH. Only its
commands that read (`runs`, `sweep status`, `sweep table`) are run: they start in about 10 ms
(lengen-light, docs/cli.md).
"""

import json
import os
import shutil
import subprocess

import pandas as pd

BUILD_COMMAND = "bash .ci/main"  # the README's build (install, build, the quick preset)


class CliNotFound(RuntimeError):
    """No `lengen` to run: LENGEN names none that exists and PATH has none."""


class CliError(RuntimeError):
    """The CLI refused the request: `returncode` and `stderr` say why (64: a usage error such
    as a filter term that cannot be one; 2: a damaged saved-views file)."""

    def __init__(self, args, returncode, stderr):
        self.args_used, self.returncode, self.stderr = args, returncode, stderr
        last = stderr.strip().splitlines()[-1] if stderr.strip() else ""
        super().__init__("`lengen %s` exited %d: %s" % (" ".join(args), returncode, last))


def executable():
    """The path of the lengen CLI, or CliNotFound naming LENGEN and the build command."""
    named = os.environ.get("LENGEN")
    if named:
        if os.path.isfile(named) and os.access(named, os.X_OK):
            return named
        found = shutil.which(named)
        if found:
            return found
        raise CliNotFound(
            "LENGEN=%s is not an executable lengen. Point the LENGEN environment variable at "
            "the CLI of a build (e.g. LENGEN=build/app/cli/lengen after `%s` in the repository, "
            "README.md)" % (named, BUILD_COMMAND))
    found = shutil.which("lengen")
    if found:
        return found
    raise CliNotFound(
        "the lengen command line was not found: set the LENGEN environment variable to it "
        "(e.g. LENGEN=build/app/cli/lengen) or put it on PATH. Build it with `%s` in the "
        "repository (README.md)" % BUILD_COMMAND)


def run(args, timeout=600, ok=(0,)):
    """stdout of `lengen ARGS`; CliError when its exit code is not one of `ok`."""
    exe = executable()
    proc = subprocess.run([exe] + list(args), capture_output=True, text=True, errors="replace",
                          timeout=timeout, stdin=subprocess.DEVNULL)
    if proc.returncode not in ok:
        raise CliError(list(args), proc.returncode, proc.stderr)
    return proc.stdout


def _as_list(value):
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return list(value)


def runs(folders, where=None, columns=None, view=None, paths=True):
    """The runs under one or more folders as a DataFrame, one row per run: the table of
    `lengen runs FOLDER --format json` (the run, the settings that differ or `columns`,
    status, steps, final_loss, min_loss, steps_per_s, wall_s, each evaluation's
    METHOD@train and METHOD@longest). A value a run does not have is NaN/None, never 0.

    where: filter terms as `lengen runs --where` and the studio's filter take them, one
      string ("pe=rope final_loss<2") or a list of strings;
    columns: the settings to show (config keys such as model.num_hidden_layers, pe, task,
      or "auto": those that differ among the runs);
    view: a view saved in the studio and shared with the folder (lengen-views.json);
    paths: add each run's `path` (its run.h5) and `run_id`, which open_run takes.
    """
    folders = [os.fspath(f) for f in _as_list(folders)]
    filters = []
    for term in _as_list(where):
        filters += ["--where", term]
    chosen = []
    if columns is not None:
        chosen = ["--columns", ",".join(_as_list(columns))]
    picked = ["--view", view] if view is not None else []
    table = json.loads(run(["runs"] + folders + filters + chosen + picked + ["--format", "json"])
                       or "[]")
    frame = pd.DataFrame(table)
    if paths:
        # The table's rows and `--json`'s lines come from one listing in one order.
        lines = run(["runs"] + folders + filters + picked + ["--json"])
        listed = [json.loads(l) for l in lines.splitlines() if l.strip()]
        if len(listed) == len(frame):
            frame.insert(1, "path", [r["path"] for r in listed])
            frame.insert(2, "run_id", [r["run_id"] for r in listed])
    return frame
