#!/usr/bin/env python3
"""Runs the reliability corpus (make_corpus.py) through the `lengen` CLI and judges each outcome.

    run_corpus.py --lengen BIN --corpus DIR [--jobs N] [--timeout S] [--sample N] [--per-kind N]
                  [--kinds run,analysis,maps,config] [--json OUT]

Every damaged file is put into a scratch run folder beside good copies of the other two files and
given to the commands that read it (info, eval, probe, export, train --resume, export-run); every
config goes through validate and a one-step train. An outcome is a defect when the process
 - died of a signal (crash),
 - did not exit within --timeout seconds (hang),
 - exited 1 (internal error), or with a code outside the documented ones,
 - failed without naming the damaged file (its path or its folder) in its message, or
 - a config with a damaged value trained "successfully" while validate refused it.
The exit status is 1 when any defect was found; the summary says how many of which kind.
"""

import argparse
import concurrent.futures as cf
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile

DOCUMENTED = {0, 2, 3, 4, 5, 64, 130}
SMALL = ["--prompts", "4", "--bootstrap", "2", "--quiet"]
COMMANDS = {
    "run": [["info"], ["info", "--parameters"], ["eval", "--methods", "standard", "--force"] + SMALL,
            ["probe", "--serial-position", "--test-length", "14"] + SMALL,
            ["export", "--all", "--format", "csv", "-q"], ["train", "--resume", "--quiet"],
            ["export-run", "--out", "{scratch}/exported", "--quiet"]],
    "analysis": [["eval", "--show"], ["probe", "--show", "--all"],
                 ["export", "--all", "--format", "csv", "-q"],
                 ["eval", "--methods", "standard"] + SMALL],
    "maps": [["export", "--figure", "attention_map:long", "--format", "csv", "-q",
              "--out", "{scratch}/map.csv"], ["export", "--all", "--format", "csv", "-q"],
             ["probe", "--show", "--attention"]],
    "config": [["validate", "--quiet"], ["train", "--steps", "1", "--quiet", "--out",
                                         "{scratch}/runs"]],
}
FILE_NAMES = {"run": "run.h5", "analysis": "analysis.h5", "maps": "attention_maps.h5"}


def prepare(case, corpus, scratch):
    """Scratch folder for one case: the damaged file plus good copies of its neighbours."""
    src = os.path.join(corpus, case["path"])
    if case["kind"] == "config":
        folder = os.path.dirname(src)  # includes (FIFO, directory) are relative to it
        return src, folder
    for kind, name in FILE_NAMES.items():
        good = os.path.join(corpus, "good", name)
        dst = os.path.join(scratch, name)
        if kind == case["kind"]:
            shutil.copyfile(src, dst)
        elif kind != "maps" or case["kind"] != "run":
            shutil.copyfile(good, dst)
    return os.path.join(scratch, "run.h5"), scratch


def judge(case, proc, timed_out, target, folder):
    if timed_out:
        return "hang"
    rc = proc.returncode
    if rc < 0:
        return "signal %s" % signal.Signals(-rc).name
    if rc == 1:
        return "exit 1"
    if rc not in DOCUMENTED:
        return "undocumented exit %d" % rc
    if rc != 0 and rc != 64:
        text = proc.stderr
        names = [target, folder, os.path.basename(os.path.dirname(target))]
        if case["kind"] == "config":
            names = [target, os.path.basename(os.path.dirname(target)) + "/"]
        if not any(n and n in text for n in names):
            return "message names no file"
    return None


def run_case(case, args):
    with tempfile.TemporaryDirectory(prefix="lengen-corpus-") as scratch:
        target, folder = prepare(case, args.corpus, scratch)
        results = []
        for cmd in COMMANDS[case["kind"]]:
            cmd = [c.replace("{scratch}", scratch) for c in cmd]
            argv = [args.lengen, cmd[0], target] + cmd[1:]
            if cmd[0] == "train" and "--resume" not in cmd:
                argv = [args.lengen, "train", target] + cmd[1:]
            env = dict(os.environ, HOME=scratch, LENGEN_THREADS="1", OMP_NUM_THREADS="1")
            try:
                proc = subprocess.run(argv, capture_output=True, text=True, errors="replace",
                                      timeout=args.timeout, env=env, stdin=subprocess.DEVNULL)
                timed_out = False
            except subprocess.TimeoutExpired as e:
                proc, timed_out = e, True
            verdict = judge(case, proc, timed_out, target, folder)
            lines = [] if timed_out else (proc.stderr or "").strip().splitlines()
            option = " " + cmd[1] if len(cmd) > 1 and cmd[1].startswith("--") else ""
            results.append({"command": cmd[0] + option,
                            "rc": None if timed_out else proc.returncode, "defect": verdict,
                            "message": lines[-1] if lines else ""})
        return case, results


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--lengen", required=True)
    p.add_argument("--corpus", required=True)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    p.add_argument("--timeout", type=float, default=30)
    p.add_argument("--sample", type=int, default=0, help="run only N cases (seeded choice)")
    p.add_argument("--per-kind", type=int, default=0, help="at most N cases of each kind")
    p.add_argument("--kinds", default="run,analysis,maps,config")
    p.add_argument("--json", help="write every outcome here")
    args = p.parse_args()
    args.lengen = os.path.abspath(args.lengen)
    args.corpus = os.path.abspath(args.corpus)
    with open(os.path.join(args.corpus, "index.json")) as f:
        cases = [c for c in json.load(f)["cases"] if c["kind"] in args.kinds.split(",")]
    if args.sample and args.sample < len(cases):
        cases = random.Random(5).sample(cases, args.sample)
    if args.per_kind:  # at most N cases of each kind
        picked = []
        for kind in args.kinds.split(","):
            of_kind = [c for c in cases if c["kind"] == kind]
            picked += random.Random(5).sample(of_kind, min(args.per_kind, len(of_kind)))
        cases = picked
    outcomes, defects, by_kind = [], {}, {}
    with cf.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for done, (case, results) in enumerate(pool.map(lambda c: run_case(c, args), cases), 1):
            if done % 50 == 0:
                print("  ... %d of %d cases" % (done, len(cases)), file=sys.stderr, flush=True)
            for r in results:
                outcomes.append(dict(r, id=case["id"], kind=case["kind"], why=case["why"]))
                key = (case["kind"], r["command"])
                by_kind.setdefault(key, {"runs": 0, "defects": 0})["runs"] += 1
                if r["defect"]:
                    by_kind[key]["defects"] += 1
                    defects.setdefault(r["defect"].split(" ")[0] if r["defect"].startswith(
                        "signal") else r["defect"], []).append(outcomes[-1])
    print("%d cases, %d runs" % (len(cases), len(outcomes)))
    for (kind, command), n in sorted(by_kind.items()):
        print("  %-9s %-22s %4d runs  %3d defects" % (kind, command, n["runs"], n["defects"]))
    for what, items in sorted(defects.items()):
        print("%s: %d" % (what, len(items)))
        for o in items[:12]:
            print("   %s %-8s %-18s rc=%s  %s  | %s" % (o["id"], o["kind"], o["command"], o["rc"],
                                                     o["why"], o["message"][:110]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(outcomes, f, indent=0)
    return 1 if defects else 0


if __name__ == "__main__":
    sys.exit(main())
