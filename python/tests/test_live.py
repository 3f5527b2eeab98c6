"""A run opens while a training writes it (SWMR), and reads as `lengen info` says afterwards:
`stopped` when `lengen stop` ended it, `interrupted` when its writer was killed."""

import glob
import os
import signal
import subprocess
import time

import lengen
from conftest import TINY, cli, lengen_path
from readall import read_run
from test_against_cli import info_text


def start(out):
    """A training of the tiny config that would run for minutes (stopped by the test)."""
    return subprocess.Popen([lengen_path(), "train", TINY, "--steps", "1000000", "--out", out,
                             "--threads", "1", "--quiet"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)


def wait_for_rows(out, rows, proc, timeout=30):
    """The run file once its log holds `rows` rows (read through the package, as it trains)."""
    until = time.monotonic() + timeout
    while time.monotonic() < until:
        assert proc.poll() is None, proc.stderr.read().decode()
        found = glob.glob(os.path.join(out, "*", "*", "*", "*", "run.h5"))
        if found:
            try:
                if lengen.open_run(found[0]).info["log_rows"] >= rows:
                    return found[0]
            except lengen.RunFileError:
                pass  # the moment the writer creates the file
        time.sleep(0.02)
    raise AssertionError("no run with %d log rows under %s after %d s" % (rows, out, timeout))


def test_reads_while_training_and_after(work):
    stopped_out, killed_out = os.path.join(work, "live", "stopped"), os.path.join(
        work, "live", "killed")
    a, b = start(stopped_out), start(killed_out)
    try:
        path = wait_for_rows(stopped_out, 10, a)
        run = lengen.open_run(path)
        info = run.info
        assert info["status"] == "running" and info["stored_status"] == "running"
        assert info["writer"].endswith(":%d" % a.pid)
        rows = len(run.log)
        read_run(path)  # every property, while the writer appends
        until = time.monotonic() + 10
        while len(run.log) <= rows and time.monotonic() < until:
            time.sleep(0.02)
        assert len(run.log) > rows, "the log did not grow while read"
        log = run.log
        assert (log["step"].diff().dropna() == 2).all()  # trimmed to whole rows
        assert len(run.pointwise) >= len(log) - 1
        assert info_text(path)["status"].startswith("running")

        killed = wait_for_rows(killed_out, 10, b)
        b.send_signal(signal.SIGKILL)
        b.wait(10)
        cli("stop", path, "--wait", "60")
        assert a.wait(60) == 130
    finally:
        for p in (a, b):
            if p.poll() is None:
                p.kill()
                p.wait()
    done = lengen.open_run(path).info
    assert done["status"] == "stopped" and done["stored_status"] == "cancelled"
    assert info_text(path)["status"].startswith("stopped, checkpoint after %d of 1000000"
                                                % done["checkpoint_step"])
    dead = lengen.open_run(killed)
    i = dead.info
    assert i["status"] == "interrupted" and i["stored_status"] == "running" and not i["writer"]
    assert info_text(killed)["status"].startswith("interrupted")
    assert len(dead.log) >= 10
    read_run(killed)
