"""Derives each shipped case's expected-gain band from the plausible ranges of the
preset's GUESS and FITTED parameters, and writes it into the case file: the band
is derived, not widened by hand after a model change.

Usage: python3 tools/gain_bands.py [--check | --ranges-table | UNCERTAINTY]

UNCERTAINTY is what `pfsim check --uncertainty` printed for every shipped case
(its --json, or its table as bench/uncertainty.sh prints it); without it this
runs `pfsim check --uncertainty --json` ($PFSIM, else bazel-bin/cli/pfsim: about
3.5 minutes on 2 quiet cores, docs/performance.md). Each case's gain range over every run made (each
parameter at both ends of its range, then the combinations pushing the gain
lowest and highest) becomes its band, widened by a margin of a tenth of the
range's width (at least 1 point), rounded outward to whole percent, but not
across zero (a gain whose sign holds across the ranges keeps it in its band). The case file
keeps the range it came from on the line above `expected_gain`, so that
--check (tests/python/test_gain_bands.py) can tell a derived band from a
hand-edited one without simulating: it exits 1 naming each case whose band is
not the derivation of its recorded range.

--ranges-table prints the markdown table of the preset's ranges (each GUESS or
FITTED parameter: its value, its range, the range's reason) that
docs/configuration.md shows.

The range must cover every parameter with a range of two ends, and every run
must have been measured: a partial run (--vary) or a case with an unmeasured
variant is refused, naming it (exit 2).
"""

import datetime
import json
import math
import os
import re
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
PRESET = os.path.join(ROOT, "model", "config", "presets", "a2a3.toml")
DERIVED = re.compile(r"^# expected_gain: the gain's range over the plausible ranges, (-?[\d.]+)\.\.(-?[\d.]+) % \(pfsim "
                     r"check --uncertainty, (\d{4}-\d\d-\d\d), (\d+) parameters\), plus a margin \(tools/gain_bands\.py\)$")
ROW = re.compile(r"^(\S+)\s+(-?[\d.]+)\s+(-?[\d.]+)\.\.(-?[\d.]+)\s+.*?\s(holds|CHANGES)(.*)$")
FOOTER = re.compile(r"^\d+ cases, (\d+) parameters varied one at a time, then combined")


class Refused(Exception):
    """An uncertainty result that cannot give bands (partial, or a run missing)."""


def band(low: float, high: float) -> list:
    """The expected-gain band of a gain that ranges over low..high % across the plausible ranges:
    widened by a tenth of its width (at least 1 point) and rounded outward, but never across zero:
    a sign that holds across the ranges holds in the band."""
    margin = max(1.0, (high - low) / 10)
    lo, hi = math.floor(low - margin), math.ceil(high + margin)
    return [max(lo, 0) if low > 0 else lo, min(hi, 0) if high < 0 else hi]


def preset_ranges(preset: str = PRESET) -> list:
    """[(key, low, high, reason)] of the preset's [ranges] table, in its order (each end as written,
    unquoted). Read line by line, as the preset writes it: one range a line, its reason a comment."""
    out, section = [], ""
    with open(preset) as f:
        for line in f:
            header = re.match(r"^\[(\w+)\]", line)
            if header:
                section = header.group(1)
            entry = re.match(r'^"([\w.]+)"\s*=\s*\[(.*?)\]\s*(?:#\s*(.*))?$', line.rstrip("\n"))
            if section == "ranges" and entry:
                low, high = (e.strip().strip('"') for e in entry.group(2).split(",", 1))
                out.append((entry.group(1), low, high, entry.group(3) or ""))
    return out


def varied_parameters(preset: str = PRESET) -> int:
    """How many of the preset's parameters have a range of two ends (what a full run varies)."""
    return sum(1 for _, low, high, _ in preset_ranges(preset) if low != high)


def top_level(path: str) -> dict:
    """A case file's top-level keys (before its first table) as written: {key: text of the value}."""
    out = {}
    with open(path) as f:
        for line in f:
            if line.startswith("["):
                break
            entry = re.match(r"^(\w+)\s*=\s*(.*?)\s*(#.*)?$", line.rstrip("\n"))
            if entry:
                out[entry.group(1)] = entry.group(2)
    return out


def parse(text: str) -> tuple:
    """(number of parameters varied, {case: (low %, high %)}) of `pfsim check --uncertainty`'s
    output, JSON or table; Refused naming a case some of whose runs gave no gain."""
    if text.lstrip().startswith("{"):
        j = json.loads(text)
        cases = {}
        for c in j["cases"]:
            if c["not_measured"]:
                raise Refused(f"{c['name']}: not measured at {', '.join(c['not_measured'])}: its range is incomplete")
            cases[c["name"]] = (c["low_pct"], c["high_pct"])
        return len(j["varied"]), cases
    cases, varied = {}, None
    for line in text.splitlines():
        footer = FOOTER.match(line)
        if footer:
            varied = int(footer.group(1))
        row = ROW.match(line)
        if row and row.group(1) != "kernel":
            if "not measured" in row.group(6):
                raise Refused(f"{row.group(1)}: {row.group(6).strip('; ')}: its range is incomplete")
            cases[row.group(1)] = (float(row.group(3)), float(row.group(4)))
    if varied is None:
        raise Refused("no '... parameters varied one at a time, then combined' line: not the table of a full "
                      "`pfsim check --uncertainty`")
    return varied, cases


def derive(text: str, files: dict, preset: str = PRESET) -> tuple:
    """(parameters varied, {case: (low %, high %)}) for every case of `files` from a full run's
    output; Refused when it is partial (fewer parameters than the preset's two-ended ranges), a
    run is missing, or a case of `files` is not in it."""
    varied, ranges = parse(text)
    if varied != varied_parameters(preset):
        raise Refused(f"{varied} parameters varied, the preset has {varied_parameters(preset)} with a range of "
                      "two ends: a partial run (--vary) cannot give the bands")
    missing = sorted(set(files) - set(ranges))
    if missing:
        raise Refused(f"no range for {', '.join(missing)}")
    return varied, ranges


def case_files() -> dict:
    """{case name: path} of the shipped cases that `pfsim check` runs."""
    out = {}
    for folder in sorted(os.listdir(os.path.join(ROOT, "cases"))):
        d = os.path.join(ROOT, "cases", folder)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            if re.fullmatch(r"case.*\.toml", name):
                spec = top_level(os.path.join(d, name))
                if spec.get("check", "true") == "true":
                    out[spec["name"].strip('"')] = os.path.join(d, name)
    return out


def derived_line(low: float, high: float, date: str, parameters: int) -> str:
    return (f"# expected_gain: the gain's range over the plausible ranges, {low:.2f}..{high:.2f} % (pfsim check "
            f"--uncertainty, {date}, {parameters} parameters), plus a margin (tools/gain_bands.py)")


def write(path: str, low: float, high: float, date: str, parameters: int) -> None:
    """Puts the derived band and the range it came from into the case file `path`."""
    with open(path) as f:
        lines = f.read().split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith("expected_gain = "))
    low, high = round(low, 2), round(high, 2)  # as the file records them: --check recomputes from those
    lo, hi = band(low, high)
    new = [derived_line(low, high, date, parameters), f"expected_gain = [{lo}, {hi}]"]
    start = at - 1 if at > 0 and DERIVED.match(lines[at - 1]) else at
    lines[start:at + 1] = new
    with open(path, "w") as f:
        f.write("\n".join(lines))


def recorded_range(path: str) -> tuple | None:
    """(low %, high %) the case file records above its expected_gain, or None."""
    with open(path) as f:
        lines = f.read().split("\n")
    at = next((i for i, line in enumerate(lines) if line.startswith("expected_gain = ")), 0)
    recorded = DERIVED.match(lines[at - 1]) if at > 0 else None
    return (float(recorded.group(1)), float(recorded.group(2))) if recorded else None


def check(path: str) -> str | None:
    """None when the case file's band is the derivation of the range it records; else what is wrong."""
    recorded = recorded_range(path)
    if recorded is None:
        return "expected_gain has no derived range above it (run tools/gain_bands.py)"
    written = [float(v) for v in top_level(path)["expected_gain"].strip("[]").split(",")]
    if written != [float(v) for v in band(*recorded)]:
        return f"expected_gain {written} is not the band {band(*recorded)} of its recorded range {recorded[0]}..{recorded[1]} %"
    return None


def ranges_table(preset: str = PRESET) -> str:
    """The preset's plausible ranges as a markdown table: key, tag, value, range, reason."""
    values, section = {}, ""
    with open(preset) as f:
        for line in f:
            header = re.match(r"^\[(\w+)\]", line)
            if header:
                section = header.group(1)
            entry = re.match(r'^(\w+)\s*=\s*(.*?)\s*#\s*(\S+)', line)
            if entry and section != "ranges":
                values[f"{section}.{entry.group(1)}"] = (entry.group(2).strip('"'), entry.group(3).rstrip(":"))
    rows = ["| key | tag | value | range | why this range |", "|---|---|---|---|---|"]
    for key, low, high, reason in preset_ranges(preset):
        value, tag = values.get(key, ("", ""))
        rows.append(f"| `{key}` | {tag} | {value} | {low} .. {high} | {reason} |")
    return "\n".join(rows) + "\n"


def main(argv: list) -> int:
    if argv == ["--ranges-table"]:
        sys.stdout.write(ranges_table())
        return 0
    files = case_files()
    if argv == ["--check"]:
        problems = [f"{os.path.relpath(p, ROOT)}: {why}" for p in files.values() if (why := check(p))]
        for p in problems:
            print(p, file=sys.stderr)
        return 1 if problems else 0
    if len(argv) > 1 or any(a.startswith("-") for a in argv):
        print("usage: tools/gain_bands.py [--check | --ranges-table | UNCERTAINTY]", file=sys.stderr)
        return 2
    try:
        if argv:
            with open(argv[0]) as f:
                text = f.read()
        else:
            binary = os.environ.get("PFSIM", os.path.join(ROOT, "bazel-bin", "cli", "pfsim"))
            text = subprocess.run([binary, "check", "--uncertainty", "--json"], check=True, capture_output=True,
                                  text=True).stdout
        varied, ranges = derive(text, files)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"gain_bands.py: {e}", file=sys.stderr)
        return 2
    except (KeyError, TypeError, ValueError) as e:
        print(f"gain_bands.py: {argv[0] if argv else 'pfsim'}: not the output of a full `pfsim check --uncertainty` "
              f"({type(e).__name__}: {e})", file=sys.stderr)
        return 2
    except Refused as e:
        print(f"gain_bands.py: {e}", file=sys.stderr)
        return 2
    date = datetime.date.today().isoformat()
    for name, path in files.items():
        write(path, *ranges[name], date, varied)
        low, high = (round(v, 2) for v in ranges[name])
        print(f"{name}: {low:.2f}..{high:.2f} % -> expected_gain = {band(low, high)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
