#!/usr/bin/env python3
"""Writes the reliability corpus: damaged run/analysis/map files and bad configs.

    make_corpus.py --lengen build/app/cli/lengen --out DIR [--seed S] [--scale N]

It trains one tiny run with `lengen` (a few seconds), evaluates and probes it, and derives from
its three HDF5 files and from a tiny config every kind of damage issue 17 lists:

  files/    truncations at many offsets, byte flips in the header and the data, zeroed blocks,
            text or empty files under an HDF5 name, and "foreign layouts" made with h5py: every
            dataset and attribute of the good files deleted, turned into an array where a scalar
            belongs (and back), given another dtype or a wrong shape.
  configs/  mutations of the tiny config (values replaced by absurd ones, lines dropped or
            duplicated, keys renamed), YAML alias bombs and self-merges, !include of a FIFO, a
            directory, /dev/zero, itself, binary garbage.

Each case is one entry of DIR/index.json: {"id", "kind" (run|analysis|maps|config), "path",
"why"}. The same seed and scale give the same corpus. `run_corpus.py` runs it through the CLI.
"""

import argparse
import json
import os
import random
import shutil
import subprocess
import sys

import warnings

import h5py
import numpy as np

warnings.filterwarnings("ignore", category=RuntimeWarning)  # deliberate overflows in "huge value"

TINY = """model:
  family: Llama2
  max_length: [14]
  hidden_size: 16
  num_hidden_layers: 2
  num_attention_heads: 2
patch:
  name: rope
task:
  data: gaussian
  name: linear_regression
  curriculum:
    dims: {start: 2, end: 3, increment: 1, interval: 10}
    points: {start: 5, end: 7, increment: 2, interval: 10}
training:
  learning_rate: 1.0e-3
  max_steps: 6
  warmup_ratio: 0.1
  logging_steps: 2
  save_steps: 3
  per_device_train_batch_size: 8
seed: 3
"""


def base_files(lengen, work):
    """Trains, evaluates and probes one tiny run; returns {kind: path} of its three files."""
    cfg = os.path.join(work, "tiny.yaml")
    with open(cfg, "w") as f:
        f.write(TINY)
    out = subprocess.run([lengen, "train", cfg, "--out", os.path.join(work, "runs"), "--quiet"],
                         check=True, capture_output=True, text=True).stdout.split()[-1]
    small = ["--prompts", "8", "--bootstrap", "5", "--quiet"]
    subprocess.run([lengen, "eval", out, "--methods", "standard,ood_length", "--ood-factor", "2"]
                   + small, check=True, capture_output=True)
    subprocess.run([lengen, "probe", out, "--all", "--map-prompts", "1", "--attention-prompts", "2",
                    "--long-points", "12", "--test-length", "14", "--noise-counts", "1,2",
                    "--lengths", "7"] + small, check=True, capture_output=True)
    folder = os.path.dirname(out)
    return {"run": out, "analysis": os.path.join(folder, "analysis.h5"),
            "maps": os.path.join(folder, "attention_maps.h5")}


class Corpus:
    def __init__(self, out):
        self.out = out
        self.cases = []

    def add_bytes(self, kind, why, data, name=None):
        cid = "%04d" % len(self.cases)
        folder = os.path.join(self.out, "files" if kind != "config" else "configs", cid)
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, name or {"run": "run.h5", "analysis": "analysis.h5",
                                             "maps": "attention_maps.h5",
                                             "config": "config.yaml"}[kind])
        if data is not None:
            with open(path, "wb") as f:
                f.write(data)
        self.cases.append({"id": cid, "kind": kind, "path": os.path.relpath(path, self.out),
                           "why": why})
        return path


def byte_damage(corpus, kind, data, rng, scale):
    n = len(data)
    offsets = sorted(set([0, 1, 8, 64, 512, 2048, n // 2, n - 1] +
                         [rng.randrange(n) for _ in range(6 * scale)]))
    for off in offsets:
        corpus.add_bytes(kind, "truncated at byte %d of %d" % (off, n), data[:off])
    for i in range(8 * scale):
        # Half the flips land in the first 4 KiB (superblock, root group, object headers).
        off = rng.randrange(min(n, 4096)) if i % 2 == 0 else rng.randrange(n)
        b = bytearray(data)
        for k in range(rng.choice([1, 4, 16])):
            b[min(n - 1, off + k)] ^= rng.randrange(1, 256)
        corpus.add_bytes(kind, "bytes flipped at %d" % off, bytes(b))
    for i in range(2 * scale):
        off = rng.randrange(n)
        b = bytearray(data)
        b[off:off + 4096] = bytes(min(4096, n - off))
        corpus.add_bytes(kind, "4 KiB zeroed at %d" % off, bytes(b))
    corpus.add_bytes(kind, "empty file", b"")
    corpus.add_bytes(kind, "a text file", b"model:\n  family: Llama2\n")


def h5_objects(path):
    """[(object path, attribute name or None)] of every dataset and attribute in the file."""
    found = []
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                found.append((name, None))
            for a in obj.attrs:
                found.append((name, a))
        for a in f.attrs:
            found.append(("/", a))
        f.visititems(visit)
    return found


def variants(value):
    """Wrong versions of a dataset's or attribute's value: (why, new value)."""
    arr = np.asarray(value)
    out = []
    if arr.ndim == 0:
        out.append(("array where a scalar belongs", np.stack([arr, arr, arr])))
    else:
        out.append(("scalar where an array belongs", arr.reshape(-1)[0] if arr.size else 0))
        out.append(("one more dimension", np.stack([arr, arr])))
        if arr.shape[0] > 1:
            out.append(("first dimension cut", arr[: arr.shape[0] // 2]))
    if arr.dtype.kind in "iuf":
        out.append(("string instead of a number", "seven"))
        out.append(("huge value", np.full(arr.shape, 2 ** 62 if arr.dtype.kind in "iu" else 1e300,
                                          dtype=arr.dtype)))
        out.append(("negative value", np.full(arr.shape, -7, dtype=np.int64 if arr.dtype.kind in "iu"
                                              else arr.dtype)))
        if arr.dtype.kind == "f":
            out.append(("NaN", np.full(arr.shape, np.nan, dtype=arr.dtype)))
    else:
        out.append(("number instead of a string", np.int64(3)))
    return out


def storable(value):
    """h5py stores numpy unicode arrays only as variable-length strings."""
    arr = np.asarray(value)
    if arr.dtype.kind == "U":
        return np.array(arr.tolist(), dtype=h5py.string_dtype()) if arr.ndim else str(arr)
    return value


def family(name):
    """Objects that readers treat alike share a family: one representative of each is damaged."""
    parts = name.split("/")
    for i, part in enumerate(parts):
        if part in ("model", "exp_avg", "exp_avg_sq") and i + 1 < len(parts):
            return "/".join(parts[: i + 1]) + "/*"
    return name


def layout_damage(corpus, kind, good, rng, limit, families):
    picked = {}
    for name, attr in h5_objects(good):
        picked.setdefault((family(name), attr), []).append((name, attr))
    objects = [rng.choice(v) for _, v in sorted(picked.items())]
    if len(objects) > families:  # keep the root's attributes, sample the rest
        root = [o for o in objects if o[0] == "/"]
        objects = root + rng.sample([o for o in objects if o[0] != "/"], families - len(root))
    made = 0
    for name, attr in objects:
        with h5py.File(good, "r") as f:
            obj = f[name]
            value = (obj.attrs[attr] if attr is not None else obj[()])
        what = name + ("@" + attr if attr is not None else "")
        tries = [("deleted", None)] + [(w, storable(v)) for w, v in variants(value)]
        for why, new in tries[:limit]:
            path = corpus.add_bytes(kind, "%s: %s" % (what, why), None)
            shutil.copyfile(good, path)
            with h5py.File(path, "r+") as f:
                obj = f[name]
                if attr is not None:
                    del obj.attrs[attr]
                    if new is not None:
                        obj.attrs[attr] = new
                else:
                    parent, leaf = name.rsplit("/", 1) if "/" in name else ("/", name)
                    del f[parent][leaf]
                    if new is not None:
                        f[parent][leaf] = new
            made += 1
    return made


def config_damage(corpus, rng, scale):
    lines = TINY.splitlines()
    absurd = ["-1", "0", "1000000000", "1e308", ".nan", "abc", "[]", "{}", "null", "~", "'14'",
              "[1, [2]]", "9223372036854775808", "-0.0", "true", "!include /dev/zero"]
    for i, line in enumerate(lines):
        if ":" not in line or line.rstrip().endswith(":"):
            continue
        key = line.split(":", 1)[0]
        for value in rng.sample(absurd, min(len(absurd), 3 * scale)):
            corpus.add_bytes("config", "line %d -> %s: %s" % (i + 1, key.strip(), value),
                             "\n".join(lines[:i] + [key + ": " + value] + lines[i + 1:]).encode())
    for i in range(len(lines)):
        corpus.add_bytes("config", "line %d dropped" % (i + 1),
                         "\n".join(lines[:i] + lines[i + 1:]).encode())
        corpus.add_bytes("config", "line %d duplicated" % (i + 1),
                         "\n".join(lines[:i + 1] + lines[i:]).encode())
    editable = [i for i, l in enumerate(lines) if ":" in l and not l.rstrip().endswith(":")]
    for n in range(100 * scale):  # two values wrong at once
        mutated = list(lines)
        picked = rng.sample(editable, 2)
        for i in picked:
            mutated[i] = mutated[i].split(":", 1)[0] + ": " + rng.choice(absurd)
        corpus.add_bytes("config", "lines %d and %d absurd" % (picked[0] + 1, picked[1] + 1),
                         "\n".join(mutated).encode())
    for i in range(4 * scale):
        b = bytearray(TINY.encode())
        b[rng.randrange(len(b))] = rng.randrange(256)
        corpus.add_bytes("config", "byte flipped", bytes(b))
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
    for level in "bcdefghij":
        prev = chr(ord(level) - 1)
        bomb += "%s: &%s [%s]\n" % (level, level, ", ".join(["*" + prev] * 10))
    corpus.add_bytes("config", "alias bomb (10^10 nodes)", (TINY + bomb).encode())
    corpus.add_bytes("config", "alias bomb inside model", TINY.replace(
        "model:\n", "model:\n  junk: " + bomb.replace("\n", "\n  ") + "\n", 1).encode())
    corpus.add_bytes("config", "self-referential merge",
                     (TINY.replace("model:\n", "model: &m\n  <<: *m\n", 1)).encode())
    corpus.add_bytes("config", "merge of itself by alias",
                     b"base: &b\n  x: 1\n  inner: &i\n    <<: *b\n" + TINY.encode())
    corpus.add_bytes("config", "unknown alias", (TINY + "extra: *nothing\n").encode())
    corpus.add_bytes("config", "deeply nested", (TINY + "deep: " + "[" * 5000 + "]" * 5000 + "\n")
                     .encode())
    corpus.add_bytes("config", "tab indentation", TINY.replace("  ", "\t").encode())
    corpus.add_bytes("config", "binary garbage", bytes(rng.randrange(256) for _ in range(600)))
    corpus.add_bytes("config", "empty", b"")
    for target, why in [("fifo", "!include of a FIFO"), ("dir", "!include of a directory"),
                        ("/dev/zero", "!include of /dev/zero"), ("config.yaml", "!include of itself"),
                        ("missing.yaml", "!include of a missing file")]:
        path = corpus.add_bytes("config", why, None)
        folder = os.path.dirname(path)
        if target == "fifo":
            os.mkfifo(os.path.join(folder, "fifo"))
        elif target == "dir":
            os.mkdir(os.path.join(folder, "dir"))
        with open(path, "w") as f:
            f.write(TINY.split("training:")[0] + "training:\n  !include %s\nseed: 3\n" % target)
    return corpus


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--lengen", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--seed", type=int, default=17)
    p.add_argument("--scale", type=int, default=1, help="more cases of each random kind")
    args = p.parse_args()
    rng = random.Random(args.seed)
    if os.path.exists(args.out):
        shutil.rmtree(args.out)
    os.makedirs(args.out)
    base = os.path.join(args.out, "base")
    os.makedirs(base)
    goods = base_files(os.path.abspath(args.lengen), base)
    corpus = Corpus(args.out)
    for kind, good in goods.items():
        with open(good, "rb") as f:
            byte_damage(corpus, kind, f.read(), rng, args.scale)
        layout_damage(corpus, kind, good, rng, limit=2 + 2 * args.scale,
                      families=40 * args.scale)
    config_damage(corpus, rng, args.scale)
    shutil.copytree(os.path.dirname(goods["run"]), os.path.join(args.out, "good"))
    with open(os.path.join(args.out, "index.json"), "w") as f:
        json.dump({"seed": args.seed, "scale": args.scale, "cases": corpus.cases}, f, indent=0)
    counts = {}
    for c in corpus.cases:
        counts[c["kind"]] = counts.get(c["kind"], 0) + 1
    print("corpus: %d cases in %s (%s)" % (len(corpus.cases), args.out,
          ", ".join("%d %s" % (v, k) for k, v in sorted(counts.items()))))


if __name__ == "__main__":
    sys.exit(main())
