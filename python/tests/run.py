#!/usr/bin/env python3
"""CTest entry of the lengen Python package's tests (ctest `python`).

    run.py PATH/TO/lengen WORK_DIR [pytest arguments...]

Runs pytest on python/tests with LENGEN set to the CLI and the fixtures under WORK_DIR. The
interpreter needs h5py, numpy, pandas and pytest (Debian: python3-h5py python3-numpy
python3-pandas python3-pytest; .ci/install-deps installs them): when this one lacks them it
hands over to /usr/bin/python3, and when that lacks them too the test is skipped (exit 77),
or fails where CI requires it (LENGEN_REQUIRE_PYTHON_TORCH, as the corpus test does).
"""

import importlib.util
import os
import sys

NEEDED = ("h5py", "numpy", "pandas", "pytest")


def missing():
    return [m for m in NEEDED if importlib.util.find_spec(m) is None]


def main():
    if len(sys.argv) < 3:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 64
    lacking = missing()
    system = "/usr/bin/python3"
    if lacking and os.path.realpath(sys.executable) != os.path.realpath(system) and \
            os.path.exists(system) and not os.environ.get("LENGEN_PY_HANDED_OVER"):
        os.environ["LENGEN_PY_HANDED_OVER"] = "1"
        os.execv(system, [system] + sys.argv)
    if lacking:
        print("the lengen package's tests need %s (Debian: %s)" % (
            ", ".join(lacking), " ".join("python3-" + m for m in lacking)))
        return 1 if os.environ.get("LENGEN_REQUIRE_PYTHON_TORCH") else 77
    here = os.path.dirname(os.path.abspath(__file__))
    os.environ["LENGEN"] = os.path.abspath(sys.argv[1])
    os.environ["LENGEN_PY_WORK"] = os.path.abspath(sys.argv[2])
    os.environ.setdefault("MPLBACKEND", "Agg")  # docs/python.md's plots, no display
    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"  # nothing written into the source tree
    sys.dont_write_bytecode = True
    import pytest

    return pytest.main([here, "-q", "-p", "no:cacheprovider", "-ra"]
                       + sys.argv[3:])


if __name__ == "__main__":
    sys.exit(main())
