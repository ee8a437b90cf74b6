"""The prefetch advisor's numbers on constructed kernels, where each line's fate
is known (kernels/advisor/kernel_advise.cpp on an L2 of 3072 lines)."""

import json
import os
import subprocess

import pytest
import torch

import pfsim
import pfsim._device
from conftest import marked_line

HERE = os.path.dirname(os.path.abspath(__file__))
KERNEL = os.path.join(HERE, "kernels", "advisor", "kernel_advise.cpp")
CASE = os.path.join(HERE, "kernels", "advisor", "advise.toml")
SMALL_L2 = ["--set", "l2.size=1536KiB"]


def site(name):
    return marked_line(KERNEL, f"// advise: {name}")


def advise(mode, *extra):
    p = subprocess.run([pfsim._device.find_binary(), "run", CASE, "--arg", f"mode={mode}", "--advise", "--json",
                        *SMALL_L2, *extra], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)["advisor"]


def test_a_prefetch_evicted_before_use_has_accuracy_0_and_its_pollution_counted_line_for_line():
    a = advise(0)
    [s] = a["sites"]
    assert s["where"] == site("polluting")
    assert (s["lines_requested"], s["lines_filled"], s["useful"], s["evicted_unused"]) == (512, 512, 0, 512)
    assert s["accuracy"] == 0
    assert s["pollution_misses"] == 512  # each fill evicted one line of C; C's second pass missed on each
    assert a["demand_misses"] == 3 * 3072
    assert s["pollution"] == pytest.approx(512 / (3 * 3072))
    verdicts = [(x["where"], x["verdict"]) for x in a["advice"]]
    # The loads (all through one helper's TLOAD) miss 9216 of 9216 lines: a prefetch advised there too.
    assert verdicts == [(site("helper load"), "prefetch"), (site("polluting"), "drop"), (site("polluting"), "pollutes")]
    [loads] = a["load_sites"]
    assert (loads["where"], loads["lines"], loads["misses"]) == (site("helper load"), 3 * 3072, 3 * 3072)


def test_each_load_site_counts_its_lines_misses_stall_and_the_prefetch_that_covered_it():
    a = advise(4)
    loads = {l["where"]: l for l in a["load_sites"]}
    covered, cold = loads[site("covered load")], loads[site("cold load")]
    assert (covered["loads"], covered["bytes"], covered["lines"], covered["misses"]) == (16, 256 << 10, 512, 0)
    assert covered["covered_by"] == {site("warm"): 512} and covered["stall_ns"] == 0
    assert (cold["loads"], cold["lines"], cold["misses"], cold["covered_by"]) == (16, 512, 512, {})
    assert cold["stall_ns"] > 1000 and cold["miss_rate"] == 1
    assert a["load_sites"][0]["where"] == site("cold load")  # the most time lost first
    [x] = [x for x in a["advice"] if x["where"] == site("cold load")]
    assert x["verdict"] == "prefetch" and "loads here miss 100 % of their 512 lines" in x["message"]
    assert x["estimated_gain_ns"] == pytest.approx(cold["stall_ns"])
    assert not [x for x in a["advice"] if x["where"] == site("covered load")]


def run_json(mode, *extra):
    p = subprocess.run([pfsim._device.find_binary(), "run", CASE, "--arg", f"mode={mode}", "--json", *SMALL_L2, *extra],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_a_prefetch_sites_lines_resident_at_no_cost_is_measured_and_here_equals_the_ideal():
    """Mode 1 loads only A, which its one prefetch covers: with that prefetch's
    region resident at no cost (no post, no wait, every load a hit) the run is
    the ideal run, to the picosecond."""
    a = advise(1)
    [x] = a["advice"]
    assert x["resident_ns"] == a["what_if"]["ideal_ns"]
    assert x["resident_ns"] < x["without_ns"] < a["what_if"]["this_run_ns"]


def test_a_load_sites_region_warmed_is_measured():
    a = advise(4)
    [x] = [x for x in a["advice"] if x["where"] == site("cold load")]
    assert x["without_ns"] is None  # a load site has nothing to remove
    assert a["what_if"]["ideal_ns"] <= x["resident_ns"] < a["what_if"]["this_run_ns"]


def test_the_what_if_options_warm_a_load_site_or_make_a_prefetch_free():
    base = run_json(4)
    warmed = run_json(4, "--warm-loads", site("cold load"))
    assert (base["l2"]["misses"], warmed["l2"]["misses"]) == (512, 0)  # exactly the cold load's lines
    assert warmed["l2"]["hits"] == base["l2"]["hits"] + 512 and warmed["kernel_time_ns"] < base["kernel_time_ns"]
    free = run_json(4, "--free-prefetch", site("warm"))
    assert free["sdma"]["requests"] == 0 and free["l2"]["misses"] == 512 and free["l2"]["hits"] == 512
    unused = run_json(4, "--warm-loads", site("warm"))
    assert f"--warm-loads {site('warm')}: no load was made from that line" in unused["warnings"]
    p = subprocess.run([pfsim._device.find_binary(), "run", CASE, "--warm-loads", "kernel_advise.cpp"],
                       capture_output=True, text=True)
    assert p.returncode == 2 and "--warm-loads takes FILE:LINE" in p.stderr and p.stdout == ""


def test_a_prefetch_waited_at_once_has_lateness_1():
    [s] = advise(1)["sites"]
    assert (s["lines_filled"], s["useful"], s["late"]) == (512, 512, 512)
    assert s["lateness"] == 1 and s["accuracy"] == 1
    assert s["wait_ns"] > 1000
    [x] = advise(1)["advice"]
    assert x["verdict"] == "earlier" and x["message"].startswith("move this prefetch >= ")
    assert x["estimated_gain_ns"] == pytest.approx(s["wait_ns"])


def gather_rows_advice(*args):
    p = subprocess.run([pfsim._device.find_binary(), "run", "gather_rows", *args, "--advise", "--no-what-if", "--json"],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)["advisor"]


def test_a_site_whose_posts_hold_its_cores_long_is_costly():
    """gather_rows: 4 cores post a 128 KiB row each ~6 us; each post's two doorbells wait their
    turn in the engine's one-at-a-time publication, so posting takes most of the run."""
    a = gather_rows_advice()
    sites = {s["where"].split(":")[1]: s for s in a["sites"]}
    [x] = [x for x in a["advice"] if x["verdict"] == "costly"]
    assert x["where"].endswith(":49") and x["message"].startswith("its 120 posts held its cores ")
    assert x["estimated_gain_ns"] == pytest.approx(sites["49"]["post_ns"] / 4)
    assert sites["49"]["post_ns"] / 4 >= a["thresholds"]["post_ns"]
    # The negative control: 8 rows, 2 posts a core, under 10 us of posting each: not costly.
    few = gather_rows_advice("--arg", "indices=8")
    [s] = few["sites"]
    assert 0 < s["post_ns"] / 4 < few["thresholds"]["post_ns"]
    assert not [x for x in few["advice"] if x["verdict"] == "costly"]


def test_a_late_prefetch_off_the_critical_path_is_estimated_to_gain_nothing():
    """weight_warm_waited: the warm task waits for its whole warm at once (100 %
    late), but beside a longer matmul: had it ended later the graph would not
    have. The single-task kernel above is the critical control (estimate = wait)."""
    waited = os.path.join(HERE, "..", "..", "cases", "weight_warm", "case_waited.toml")
    p = subprocess.run([pfsim._device.find_binary(), "run", waited, "--advise", "--no-what-if", "--json"],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    a = json.loads(p.stdout)["advisor"]
    [s] = a["sites"]
    assert s["tasks"] == ["task 1 (aiv, func 1)"] and s["lateness"] == 1
    [x] = a["advice"]
    assert x["verdict"] == "earlier" and x["estimated_gain_ns"] == 0
    assert "off the critical path (its task could have ended " in x["message"]


def test_a_prefetch_posted_early_enough_is_never_late_and_gets_no_advice():
    a = advise(2)
    [s] = a["sites"]
    assert (s["useful"], s["late"], s["lateness"]) == (512, 0, 0)
    assert s["lead_ns_median"] > 0
    assert a["advice"] == []


def test_a_region_l2_already_holds_is_redundant():
    # On the default 192 MiB L2 a second run of mode 1 on one worker finds A resident.
    callable = pfsim.Callable.from_dict({
        "orchestration": {"source": "kernels/orchestration/byte_copy_orch.cpp",
                          "signature": [pfsim.ArgDirection.IN, pfsim.ArgDirection.OUT]},
        "incores": [{"func_id": 0, "source": "kernels/advisor/kernel_advise.cpp", "core_type": "aiv"}],
    }, HERE)
    with pfsim.Worker(enable_sdma=True) as worker:
        h = worker.register(callable)
        regions, unused = torch.zeros(851968), torch.zeros(16)
        first = worker.run(h, [regions, unused, 1], advise=True).advisor
        again = worker.run(h, [regions, unused, 1], advise=True).advisor
    assert first["sites"][0]["lines_filled"] == 512
    [s] = again["sites"]
    assert (s["lines_filled"], s["lines_resident"]) == (0, 512)
    assert [x["verdict"] for x in again["advice"]] == ["redundant"]


def test_the_advisor_changes_nothing_the_run_computes_or_times():
    args = [pfsim._device.find_binary(), "run", CASE, "--arg", "mode=1", "--json", *SMALL_L2]
    plain = json.loads(subprocess.run(args, capture_output=True, text=True).stdout)
    advised = json.loads(subprocess.run(args + ["--advise", "--sanitize"], capture_output=True, text=True).stdout)
    for key in ("kernel_time_ns", "cycles", "outputs", "l2", "gm", "sdma"):
        assert plain[key] == advised[key], key


def test_the_terminal_table_names_the_site_and_the_advice():
    p = subprocess.run([pfsim._device.find_binary(), "run", CASE, "--arg", "mode=0", "--advise", *SMALL_L2],
                       capture_output=True, text=True)
    assert p.returncode == 0
    assert "prefetch site" in p.stdout and site("polluting") in p.stdout
    assert "2. " + site("polluting") + ": drop it: accuracy 0 %" in p.stdout
    assert "load site" in p.stdout and "1. " + site("helper load") + ": loads here miss 100 %" in p.stdout


def test_the_ideal_what_if_bounds_the_gain_and_is_0_without_misses():
    none = advise(3)
    assert none["demand_misses"] == 0 and none["sites"] == []
    w = none["what_if"]
    assert w["ideal_ns"] == w["prefetch_off_ns"] and w["ideal_gain_pct"] == 0
    w = advise(1)["what_if"]  # 512 lines loaded: the ideal run serves them as hits
    assert w["ideal_ns"] < w["prefetch_off_ns"] and w["ideal_gain_pct"] > 0
    assert w["gain_pct"] < w["ideal_gain_pct"]
    assert advise(1, "--no-what-if")["what_if"] is None


def test_check_advises_on_the_prefetch_on_run_with_its_what_if(tmp_path):
    case = tmp_path / "late.toml"
    text = open(CASE).read().replace("mode = 0", "mode = 1")
    case.write_text(text.replace('"../orchestration/byte_copy_orch.cpp"',
                                 json.dumps(os.path.join(HERE, "kernels", "orchestration", "byte_copy_orch.cpp")))
                    .replace('"kernel_advise.cpp"', json.dumps(KERNEL)))
    p = subprocess.run([pfsim._device.find_binary(), "check", str(case), "--advise", "--json"], capture_output=True,
                       text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    row = json.loads(p.stdout)["kernels"][0]
    a = row["advisor"]
    assert a["sites"][0]["lateness"] == 1
    assert a["what_if"]["prefetch_off_ns"] == pytest.approx(row["time_off_ns"])
    assert a["what_if"]["this_run_ns"] == pytest.approx(row["time_on_ns"])
    [x] = a["advice"]  # and the advised site measured removed, as run --advise does
    assert x["where"] == site("prefetch") and x["without_ns"] > 0 and x["without_ns"] != pytest.approx(row["time_on_ns"])


def test_the_report_and_the_trace_show_the_findings_and_the_advice(tmp_path):
    summary, trace, page = tmp_path / "run.json", tmp_path / "trace.json", tmp_path / "report.html"
    misuse = os.path.join(HERE, "kernels", "sanitizer", "misuse.toml")
    p = subprocess.run([pfsim._device.find_binary(), "run", misuse, "--arg", "misuse=0", "--sanitize", "--advise",
                        "--json", "--trace", str(trace)], capture_output=True, text=True, timeout=600)
    assert p.returncode == 1  # the stale completion is an error
    summary.write_text(p.stdout)
    events = json.loads(trace.read_text())
    events = events["traceEvents"] if isinstance(events, dict) else events
    markers = [e["name"] for e in events if e.get("ph") == "i"]
    assert "stale-completion at " + marked_line(os.path.join(HERE, "kernels", "sanitizer", "kernel_misuse.cpp"),
                                                "// site: stale-build") in markers
    assert any(m.startswith("drop at kernel_misuse.cpp:") for m in markers)
    p = subprocess.run([pfsim._device.find_binary(), "report", str(summary), "--html", str(page)],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    html = page.read_text()
    for heading in ("<h2>Sanitizer: misuse</h2>", "Advisor: misuse: lines per prefetch site",
                    "Advisor: misuse: measured what-ifs"):
        assert heading in html
    assert "stale-completion" in html and "drop it: accuracy 0 %" in html


def test_each_advised_site_is_measured_removed():
    a = advise(1)
    [x] = a["advice"]
    # The site is the kernel's only prefetch: without it the run is the prefetch-off run, to the picosecond.
    assert x["without_ns"] == pytest.approx(a["what_if"]["prefetch_off_ns"], rel=1e-12)


def test_drop_prefetch_removes_one_sites_prefetches_and_the_sanitizer_says_so():
    run = [pfsim._device.find_binary(), "run", CASE, "--arg", "mode=1", "--json", "--sanitize", *SMALL_L2]
    removed = json.loads(subprocess.run(run + ["--drop-prefetch", site("prefetch")], capture_output=True, text=True).stdout)
    [f] = [f for f in removed["sanitizer"]["findings"] if f["kind"] == "dropped-prefetch"]
    assert f["site"]["where"] == site("prefetch") and "--drop-prefetch" in f["what"]
    assert removed["sdma"]["prefetch_requests"] == 0
    other = json.loads(subprocess.run(run + ["--drop-prefetch", "kernel_advise.cpp:1"], capture_output=True, text=True).stdout)
    plain = json.loads(subprocess.run(run, capture_output=True, text=True).stdout)
    assert other["kernel_time_ns"] == plain["kernel_time_ns"] and other["sdma"] == plain["sdma"]
    assert "--drop-prefetch kernel_advise.cpp:1: no prefetch was posted from that line" in other["warnings"]
    assert site("prefetch") not in " ".join(removed["warnings"])


@pytest.mark.parametrize("bad", ["kernel.cpp", "kernel.cpp:", ":12", "kernel.cpp:12a"])
def test_drop_prefetch_takes_file_and_line(bad):
    p = subprocess.run([pfsim._device.find_binary(), "run", CASE, "--drop-prefetch", bad], capture_output=True, text=True)
    assert p.returncode == 2 and p.stdout == ""
    assert f"--drop-prefetch takes FILE:LINE" in p.stderr and f"not '{bad}'" in p.stderr
