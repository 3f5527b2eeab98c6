"""The reliability corpus (tests/corpus/make_corpus.py: truncations, byte flips, zeroed blocks,
text under an HDF5 name, every dataset and attribute deleted or of another type or shape) read
through the package: each case reads whole or raises RunFileError naming the damaged file; no
other exception, no crash, no hang.

Each case is read in a forked child (a crash inside HDF5 kills the child, not the test), two at
a time, each with a deadline."""

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import time
import traceback

import pytest

import lengen
from conftest import ROOT, lengen_path
from readall import read_run

FILE_NAMES = {"run": "run.h5", "analysis": "analysis.h5", "maps": "attention_maps.h5"}
DEADLINE = 20  # seconds a case may take; a tiny run's files read in milliseconds
JOBS = 2


@pytest.fixture(scope="session")
def corpus(work):
    out = os.path.join(work, "corpus")
    subprocess.run([sys.executable, os.path.join(ROOT, "tests", "corpus", "make_corpus.py"),
                    "--lengen", lengen_path(), "--out", out], check=True, capture_output=True,
                   timeout=300)
    with open(os.path.join(out, "index.json")) as f:
        cases = [c for c in json.load(f)["cases"] if c["kind"] in FILE_NAMES]
    return out, cases


def prepare(corpus_dir, case, scratch):
    """A run folder of the damaged file and good copies of the other two."""
    os.makedirs(scratch)
    for kind, name in FILE_NAMES.items():
        if kind == case["kind"]:
            src = os.path.join(corpus_dir, case["path"])
            if os.path.lexists(src):
                shutil.copyfile(src, os.path.join(scratch, name))
        else:
            shutil.copyfile(os.path.join(corpus_dir, "good", name), os.path.join(scratch, name))
    return os.path.join(scratch, FILE_NAMES[case["kind"]])


def outcome(folder, target):
    """What reading the run folder gave: ok, or the error (in the child)."""
    try:
        read_run(folder)
        return {"result": "ok"}
    except lengen.RunFileError as e:
        named = e.path == target and target in str(e)
        return {"result": "refused", "named": named, "message": str(e)}
    except BaseException as e:  # noqa: B902 - anything else is the defect this test finds
        return {"result": "other", "message": "".join(
            traceback.format_exception_only(type(e), e)).strip()}


def run_all(jobs):
    """[(case, folder, target)] -> {case id: outcome}, each in a forked child."""
    results, running, pending = {}, {}, list(jobs)
    while pending or running:
        while pending and len(running) < JOBS:
            case, folder, target = pending.pop()
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:  # the child: read, report, leave without running the parent's exit
                os.close(r)
                try:
                    os.write(w, json.dumps(outcome(folder, target)).encode())
                finally:
                    os._exit(0)
            os.close(w)
            running[pid] = (case, r, time.monotonic() + DEADLINE, bytearray())
        ready, _, _ = select.select([v[1] for v in running.values()], [], [], 0.05)
        for pid, (case, r, deadline, buf) in list(running.items()):
            if r in ready:
                chunk = os.read(r, 1 << 16)
                buf += chunk
            done, status = os.waitpid(pid, os.WNOHANG)
            if done == 0 and time.monotonic() < deadline:
                continue
            if done == 0:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                results[case["id"]] = {"result": "hang"}
            else:
                while True:
                    chunk = os.read(r, 1 << 16)
                    if not chunk:
                        break
                    buf += chunk
                if os.WIFSIGNALED(status):
                    results[case["id"]] = {"result": "crash",
                                           "message": signal.Signals(os.WTERMSIG(status)).name}
                else:
                    results[case["id"]] = json.loads(buf.decode() or '{"result": "no answer"}')
            os.close(r)
            del running[pid]
    return results


def test_every_damaged_file_is_refused_by_name(corpus, work):
    corpus_dir, cases = corpus
    scratch = os.path.join(work, "corpus-reads")
    shutil.rmtree(scratch, ignore_errors=True)
    jobs = []
    for c in cases:
        folder = os.path.join(scratch, c["id"])
        jobs.append((c, folder, prepare(corpus_dir, c, folder)))
    started = time.monotonic()
    results = run_all(jobs)
    took = time.monotonic() - started
    defects = []
    counts = {}
    for c in cases:
        r = results[c["id"]]
        counts[r["result"]] = counts.get(r["result"], 0) + 1
        if r["result"] in ("other", "crash", "hang", "no answer") or (
                r["result"] == "refused" and not r["named"]):
            defects.append("%s %-8s %-40s %s: %s" % (c["id"], c["kind"], c["why"][:40],
                                                     r["result"], r.get("message", "")[:160]))
    print("%d cases in %.1f s: %s" % (len(cases), took, counts))
    assert not defects, "%d of %d cases:\n" % (len(defects), len(cases)) + "\n".join(defects)
    assert counts.get("refused", 0) > len(cases) // 2  # the corpus is mostly damage
