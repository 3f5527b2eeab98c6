"""Read LenGen Studio's runs in Python: the catalog, one run's log, evaluations, probes and
attention maps, and sweeps, as pandas DataFrames. Read-only: nothing here writes a run.

    import lengen
    table = lengen.runs("runs/", where="pe=rope final_loss<2")   # through `lengen runs`
    run = lengen.open_run(table.path[0])
    run.log.plot(x="step", y="loss")
    run.curve("ood_length")                 # error per position, baselines, bootstrap band
    lengen.open_sweep("S").aggregate        # a sweep's curves over seeds

docs/python.md is the notebook-style guide; docs/run-format.md, docs/analysis-format.md and
docs/sweep-format.md describe the files.
"""

from ._h5 import RunFileError
from .cli import CliError, CliNotFound, runs
from .run import AttentionMap, Probes, Run, open_run
from .sweep import Sweep, open_sweep

__version__ = "0.1.0"

# The studio's palette (widgets/plots/plot_style.cpp, kPalette): seaborn's "colorblind". Its
# figures give the n-th curve palette[n % 10]; use the same order for the same colours.
palette = ["#0173B2", "#DE8F05", "#029E73", "#D55E00", "#CC78BC",
           "#CA9161", "#FBAFE4", "#949494", "#ECE133", "#56B4E9"]


def color(i):
    """The studio's colour for the i-th curve (it wraps after ten)."""
    return palette[i % len(palette)]


__all__ = ["runs", "open_run", "open_sweep", "palette", "color", "Run", "Sweep", "Probes",
           "AttentionMap", "RunFileError", "CliError", "CliNotFound"]
