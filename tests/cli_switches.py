#!/usr/bin/env python3
"""Issue 73: a switch that several commands share says the same in every command's --help.

--device, --threads, --quiet and --json were defined 3 to 10 times with differing texts; they
are defined once now (app/cli/common_options.h). This walks `lengen --help`, `lengen sweep
--help` and every subcommand's --help, collects each shared switch's description, and fails
naming the commands whose text differs. `sweep run --device` names the devices its cells share
(a list) and is the one other text of --device.

    cli_switches.py PATH/TO/lengen
"""
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

SHARED = ("--device", "--threads", "--quiet", "--json")
# (switch, command) pairs with a text of their own, and why.
OWN_TEXT = {("--device", "sweep run"): "the devices the cells share"}
# The least number of commands each switch must be found in (the walk itself is checked).
AT_LEAST = {"--device": 5, "--threads": 4, "--quiet": 8, "--json": 4}


def help_text(lengen, words):
    out = subprocess.run([lengen, *words, "--help"], capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        sys.exit(f"`lengen {' '.join(words)} --help` exited {out.returncode}: {out.stderr}")
    return out.stdout


def section(text, title):
    """The lines of a help section ("Options:", "Subcommands:") up to the next blank line."""
    lines = text.splitlines()
    if title not in lines:
        return []
    start = lines.index(title) + 1
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    return lines[start:end]


def options(text):
    """{switch: description} of every option in the help (CLI11: names, then the text at column
    30, or on the next line when the names are longer)."""
    found, lines = {}, section(text, "Options:")
    for i, line in enumerate(lines):
        if not line.startswith("  -"):
            continue
        names = line.split()[0].split(",")
        rest = line[30:].strip() if len(line) > 30 and line[28:30] == "  " else ""
        if not rest and i + 1 < len(lines) and lines[i + 1].startswith(" " * 30):
            rest = lines[i + 1].strip()
        for name in names:
            found[name] = rest
    return found


def main():
    lengen = sys.argv[1]
    commands = [[line.split()[0]] for line in section(help_text(lengen, []), "Subcommands:")]
    commands += [["sweep", line.split()[0]]
                 for line in section(help_text(lengen, ["sweep"]), "Subcommands:")]
    texts = {s: {} for s in SHARED}  # switch -> text -> commands
    # Each --help starts a process that loads LibTorch (0.4 s): four at a time, read in order.
    with ThreadPoolExecutor(max_workers=4) as pool:
        helps = list(pool.map(lambda words: help_text(lengen, words), commands))
    for words, text_of_help in zip(commands, helps):
        name = " ".join(words)
        for switch, text in options(text_of_help).items():
            if switch in texts and (switch, name) not in OWN_TEXT:
                texts[switch].setdefault(text, []).append(name)
    failed = False
    for switch, by_text in texts.items():
        count = sum(len(v) for v in by_text.values())
        if count < AT_LEAST[switch]:
            print(f"{switch}: found in {count} commands only (expected {AT_LEAST[switch]} or more)")
            failed = True
        if len(by_text) > 1:
            print(f"{switch} says different things:")
            for text, names in by_text.items():
                print(f"  {', '.join(names)}: {text!r}")
            failed = True
    if failed:
        sys.exit(1)
    print(f"cli_switches: {', '.join(SHARED)} say the same in every command "
          f"({len(commands)} commands)")


main()
