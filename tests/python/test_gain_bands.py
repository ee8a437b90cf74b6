"""The shipped cases' expected-gain bands are derived from the gains' ranges over the
plausible parameter ranges (tools/gain_bands.py), not widened by hand: each case file
records the range `pfsim check --uncertainty` gave, and its band must be that range's."""

import json
import os
import shutil
import subprocess
import sys

import pytest

import pfsim

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import gain_bands  # noqa: E402  (tools/ is no package)

TABLE = """\
kernel                    gain %           range %  moved most by (gain % at its ends)               sign
gemv_stream             -4253.85 -5471.26..-2221.39  core.outstanding_lines (-2971.87, -4534.15)      holds
vector_chain                0.00        0.00..0.00  sdma.doorbell_latency (0.00, 0.00)               holds
gather_rows               -18.25     -51.51..15.42  core.outstanding_lines (11.76, -44.64)           CHANGES
2 cases, 3 parameters varied one at a time, then combined (30 runs)
"""


def test_every_shipped_case_checked_has_the_band_derived_from_its_recorded_range(tmp_path):
    files = gain_bands.case_files()
    kernels = json.loads(subprocess.run([pfsim.find_binary(), "kernels", "--json"], capture_output=True, text=True,
                                        check=True).stdout)
    assert set(files) == {k["name"] for k in kernels if k["in_check"]}  # the tool's cases are check's
    for name, path in files.items():
        assert gain_bands.check(path) is None, f"{name}: {gain_bands.check(path)}"
        assert all(abs(v) < 1e8 for v in gain_bands.band(*gain_bands.recorded_range(path))), name  # both sides bounded
    # the negative controls: a band widened by hand, and one without its range
    gemv = tmp_path / "case.toml"
    text = open(files["gemv_stream"]).read()
    lines = text.split("\n")
    at = next(i for i, l in enumerate(lines) if l.startswith("expected_gain = "))
    gemv.write_text("\n".join(lines[:at] + ["expected_gain = [-5000, 0]"] + lines[at + 1:]))
    assert "is not the band" in gain_bands.check(str(gemv))
    gemv.write_text("\n".join(lines[:at - 1] + lines[at:]))
    assert "no derived range above it" in gain_bands.check(str(gemv))


def test_a_band_is_the_range_plus_a_tenth_of_its_width_rounded_outward_but_not_across_zero():
    assert gain_bands.band(-5471.26, -2221.39) == [-5797, -1896]
    assert gain_bands.band(0.0, 0.0) == [-1, 1]           # at least 1 point: a gain nothing moves
    assert gain_bands.band(8.53, 37.57) == [5, 41]
    assert gain_bands.band(-51.51, 15.42) == [-59, 23]    # a sign that changes stays in the band
    assert gain_bands.band(0.93, 46.15) == [0, 51]        # a gain that holds its sign keeps it: not -4
    assert gain_bands.band(-5.0, -0.5) == [-6, 0]


def test_the_ranges_come_from_a_full_runs_table_or_json_and_a_partial_or_failed_run_is_refused(tmp_path):
    preset = tmp_path / "preset.toml"
    preset.write_text('[ranges]\n"a" = [1, 2]\n"b" = ["x", "y"]\n"c" = ["p", "q"]\n"d" = [5, 5]\n')
    files = {"gemv_stream": "", "vector_chain": "", "gather_rows": ""}
    varied, ranges = gain_bands.derive(TABLE, files, str(preset))
    assert varied == 3 and ranges["gather_rows"] == (-51.51, 15.42) and ranges["vector_chain"] == (0.0, 0.0)
    as_json = json.dumps({"varied": ["a", "b", "c"], "cases": [
        {"name": n, "low_pct": lo, "high_pct": hi, "not_measured": []} for n, (lo, hi) in ranges.items()]})
    assert gain_bands.derive(as_json, files, str(preset)) == (3, ranges)
    with pytest.raises(gain_bands.Refused, match="2 parameters varied, the preset has 3"):
        gain_bands.derive(TABLE.replace("3 parameters", "2 parameters"), files, str(preset))
    with pytest.raises(gain_bands.Refused, match="no range for no_gain"):
        gain_bands.derive(TABLE, {**files, "no_gain": ""}, str(preset))
    failed = TABLE.replace("CHANGES", "CHANGES; not measured at 1 of its variants (a run failed)")
    with pytest.raises(gain_bands.Refused, match="gather_rows: not measured at 1 of its variants"):
        gain_bands.derive(failed, files, str(preset))
    with pytest.raises(gain_bands.Refused, match="not the table of a full"):
        gain_bands.derive(TABLE.splitlines()[0], files, str(preset))


def test_writing_a_band_replaces_the_previous_derivation(tmp_path):
    case = tmp_path / "case.toml"
    case.write_text('name = "x"\n# why\nexpected_gain = [-5000, 0]\n[params]\n')
    gain_bands.write(str(case), -18.254, 11.756, "2026-12-06", 34)
    gain_bands.write(str(case), -20.0, 10.0, "2026-12-07", 34)
    text = case.read_text()
    assert text.count("expected_gain") == 2 and "# why\n# expected_gain: " in text  # one line and its range
    assert ("ranges, -20.00..10.00 % (pfsim check --uncertainty, 2026-12-07, 34 parameters)" in text and
            "expected_gain = [-23, 13]" in text)
    assert gain_bands.check(str(case)) is None
