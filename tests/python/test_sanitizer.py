"""The prefetch sanitizer: each class of misuse is reported at its call site
in the kernel (kernel_misuse.cpp, the lines marked "site:"), and the corrected
twin of each misuse gives no finding of its class."""

import json
import os
import re
import subprocess

import pytest
import torch

import pfsim
import pfsim._device
from conftest import marked_line

HERE = os.path.dirname(os.path.abspath(__file__))
KERNEL = os.path.join(HERE, "kernels", "sanitizer", "kernel_misuse.cpp")


def site(name):
    return marked_line(KERNEL, f"// site: {name}")


CALLABLE = pfsim.Callable.from_dict({
    "orchestration": {"source": "kernels/sanitizer/sanitizer_orch.cpp",
                      "signature": [pfsim.ArgDirection.IN, pfsim.ArgDirection.INOUT]},
    "incores": [{"func_id": 0, "source": "kernels/sanitizer/kernel_misuse.cpp", "core_type": "aiv"}],
}, HERE)


def run_on(worker, handle, number, fixed, blocks):
    data, out = torch.arange(256 * 1024, dtype=torch.float32), torch.zeros(1024)
    return worker.run(handle, [data, out, number, int(fixed), blocks], sanitize=True)


@pytest.fixture(scope="module")
def misuse():
    """Runs misuse `number` (or its twin) on one persistent worker; fresh=True on
    a new one (L2 empty: the earlier runs left the input resident)."""
    with pfsim.Worker(enable_sdma=True) as worker:
        handle = worker.register(CALLABLE)

        def run(number, fixed, blocks=1, fresh=False):
            if not fresh:
                return run_on(worker, handle, number, fixed, blocks)
            with pfsim.Worker(enable_sdma=True) as new:
                return run_on(new, new.register(CALLABLE), number, fixed, blocks)
        yield run


# (misuse number, kind, severity, the site, the other site or None, blocks)
CLASSES = [
    (0, "stale-completion", "error", "stale-build", "stale-earlier", 1),
    (1, "never-waited", "info", "never-waited", None, 1),
    (2, "mismatched-wait", "error", "mismatched-wait", "mismatched-post", 1),
    (3, "shared-channel-group", "error", "shared-post", "shared-post", 2),
    (4, "scratch-clobbered", "error", "scratch-tile", "scratch-post", 1),
    (5, "dropped-prefetch", "warning", "dropped", None, 1),
    (6, "post-blocked", "info", "blocked", None, 1),
    (7, "wasted-prefetch", "warning", "wasted", None, 1),
    (8, "unflushed-gm-store", "error", "unflushed", None, 1),
    (9, "lost-gm-write", "error", "lost-write", "lost-write", 2),
]


@pytest.mark.parametrize("number, kind, severity, where, other, blocks", CLASSES, ids=[c[1] for c in CLASSES])
def test_each_misuse_is_reported_at_its_site_and_its_twin_is_clean(misuse, number, kind, severity, where, other, blocks):
    found = misuse(number, False, blocks).findings(kind)
    assert len(found) == 1, found
    f = found[0]
    assert f["severity"] == severity
    assert f["site"]["where"] == site(where)
    assert re.fullmatch(r"die\.aiv\d+", f["site"]["core"])
    assert "block" in f["site"]["task"]
    if other:
        assert f["other"]["site"]["where"] == site(other)
    assert misuse(number, True, blocks, fresh=kind == "wasted-prefetch").findings(kind) == []


@pytest.mark.parametrize("preset, note", [("a2a3-2026-07", "has no channel warm-up"), ("a2a3", None)])
def test_a_cold_channel_holds_the_post_without_the_warm_up_of_pto_isa_7ddaa823(preset, note):
    # The corrected twin of misuse 5 makes one clean prefetch + wait: on the
    # older PTO-ISA (no warm-up) its doorbell waits for the channel's
    # publication; with today's warm-up at worker start it does not.
    with pfsim.Worker(enable_sdma=True, preset=preset) as worker:
        found = run_on(worker, worker.register(CALLABLE), 5, True, 1).findings("cold-channel")
    if note is None:
        assert found == []
        return
    assert len(found) == 1, found
    assert found[0]["severity"] == "warning"
    assert found[0]["site"]["where"] == site("dropped")
    held = re.search(r"held the core ([\d.]+) ns", found[0]["what"])
    assert held and 90e3 < float(held.group(1)) < 200e3, found[0]["what"]  # one channel's publication, ~92 us
    assert note in " ".join(found[0]["notes"])


def test_a_prefetched_region_overwritten_before_any_read_is_wasted(misuse):
    [f] = misuse(10, False, fresh=True).findings("wasted-prefetch")
    assert f["severity"] == "warning" and "overwritten whole by a core before any core read them" in f["what"]
    assert f["site"]["where"] == site("written-first") and f["other"]["site"]["where"] == site("written-store")
    assert any(n.startswith("8 of the region's lines") for n in f["notes"]), f["notes"]  # 4 KiB: 8 lines of 512 B
    assert misuse(10, True, fresh=True).findings("wasted-prefetch") == []  # read first: the prefetch served the read


@pytest.mark.parametrize("waited", [False, True])
def test_a_stale_completion_across_two_runs_of_one_worker_is_reported(waited):
    """Run 1 leaves its 1 MiB warm unwaited: its flag lands after the run's
    last kernel returned. Run 2, on the same worker, builds a session on the
    same group sooner after its start than that: on the board, where the host
    starts run 2 as soon as run 1's graph is done, the flag is still in
    flight. The corrected twin waits in run 1."""
    with pfsim.Worker(enable_sdma=True) as worker:
        handle = worker.register(CALLABLE)
        run_on(worker, handle, 11, waited, 1)
        found = run_on(worker, handle, 5, True, 1).findings("stale-completion")
    if waited:
        assert found == []
        return
    [f] = found
    assert "a flag request the last run on this worker posted on it, landing after that run ended" in f["what"]
    assert f["severity"] == "error"
    late_by = re.search(r"the last run's flag landed ([\d.]+) ns after its last kernel returned", f["notes"][0])
    built = re.search(r"this session was built ([\d.]+) ns after this run began", f["notes"][0])
    assert late_by and built and float(built.group(1)) < float(late_by.group(1)), f["notes"]
    assert f["site"]["where"] == site("dropped") and f["other"]["site"]["where"] == site("carried-warm")
    assert f["region"]["bytes"] == 1 << 20
    assert f["event"] == 1


def test_one_line_written_by_two_cores_one_after_the_other_is_no_lost_write(misuse):
    assert misuse(9, 2, blocks=2).findings("lost-gm-write") == []


def test_a_clean_run_has_no_findings(misuse):
    r = misuse(1, True, fresh=True)
    assert r.sanitizer["errors"] == r.sanitizer["warnings"] == r.sanitizer["infos"] == 0


def test_the_stale_completion_says_when_the_earlier_flag_lands(misuse):
    # (earlier tests' runs on this worker may leave posts in flight: take the one of this run's own sessions)
    [f] = [f for f in misuse(0, False).findings("stale-completion") if f["other"]["site"]["where"] == site("stale-earlier")]
    assert f["session"].startswith("channel group 0")
    assert f["event"] == 1
    assert f["region"] == {"space": "GM", "addr": f["region"]["addr"], "bytes": 1 << 20}
    assert re.search(r"lands at \+[\d.]+ ns and writes post id 1", f["notes"][0])


def test_the_scratch_overlap_is_the_tiles_part_of_ub_0_to_256(misuse):
    f = misuse(4, False).findings("scratch-clobbered")[0]
    assert f["region"] == {"space": "UB", "addr": 0, "bytes": 256}


def test_sixty_four_posts_fit_the_sixty_fifth_blocks(misuse):
    assert len(misuse(6, False).findings("post-blocked")) == 1
    assert misuse(6, False).findings("post-blocked")[0]["count"] == 1


# The CLI: `pfsim run|check CASE.toml --sanitize`, on the same kernel as a case file.
CASE = os.path.join(HERE, "kernels", "sanitizer", "misuse.toml")


def pfsim_cli(*args):
    p = subprocess.run([pfsim._device.find_binary(), *args], capture_output=True, text=True, timeout=600)
    return p.returncode, p.stdout, p.stderr


def test_the_cli_prints_the_report_on_stderr_and_fails_on_an_error():
    status, out, err = pfsim_cli("run", CASE, "--arg", "misuse=0", "--sanitize", "--json")
    assert status == 1
    report = json.loads(out)["sanitizer"]  # stdout stays one JSON document
    assert report["errors"] == 1 and report["findings"][1]["kind"] == "stale-completion"
    assert "========= ERROR: stale completion: a session was built" in err
    assert f"=========     at {site('stale-build')}\n" in err
    assert f"=========     the earlier session's post in flight at {site('stale-earlier')}\n" in err
    assert err.rstrip().endswith("========= ERROR SUMMARY: 1 error, 1 warning, 1 info")


def test_error_exitcode_and_print_limit():
    assert pfsim_cli("run", CASE, "--arg", "misuse=0", "--sanitize", "--error-exitcode", "7")[0] == 7
    assert pfsim_cli("run", CASE, "--arg", "misuse=0", "--sanitize", "--error-exitcode", "0")[0] == 0
    assert pfsim_cli("run", CASE, "--arg", "misuse=1", "--sanitize")[0] == 0  # an info is no error
    status, _, err = pfsim_cli("run", CASE, "--arg", "misuse=0", "--sanitize", "--print-limit", "1")
    assert err.count("=========     at ") == 1 and "2 more not shown (--print-limit 1)" in err


def test_a_suppression_removes_a_finding_by_kind_and_site(tmp_path):
    supp = tmp_path / "supp.txt"
    supp.write_text(f"# known: the test's own misuse\nstale-completion {site('stale-build')}\nwasted-prefetch\n")
    status, _, err = pfsim_cli("run", CASE, "--arg", "misuse=0", "--sanitize", "--suppressions", str(supp))
    assert status == 0, err
    assert err.rstrip().endswith("ERROR SUMMARY: 0 errors, 0 warnings, 1 info, 2 suppressed")
    supp.write_text(f"stale-completion kernel_misuse.cpp:1\n")  # another line: not suppressed
    assert pfsim_cli("run", CASE, "--arg", "misuse=0", "--sanitize", "--suppressions", str(supp))[0] == 1


@pytest.mark.parametrize("args, message", [
    (["--sanitize", "--suppressions", "{bad}"], "{bad}:2: unknown finding kind 'stale'"),
    (["--sanitize", "--suppressions", "/nonexistent/supp"], "/nonexistent/supp: cannot read the suppressions file"),
    (["--error-exitcode", "3"], "--error-exitcode is for --sanitize"),
    (["--sanitize", "--error-exitcode", "x"], "--error-exitcode takes a whole number up to 255, not 'x'"),
    (["--sanitize", "--print-limit", "-1"], "--print-limit takes a whole number"),
])
def test_bad_sanitizer_options_exit_2_naming_what_is_wrong(tmp_path, args, message):
    bad = tmp_path / "bad.txt"
    bad.write_text("never-waited\nstale kernel.cpp:3\n")
    args = [a.replace("{bad}", str(bad)) for a in args]
    status, out, err = pfsim_cli("run", CASE, *args)
    assert status == 2 and out == ""
    assert message.replace("{bad}", str(bad)) in err


def test_check_sanitizes_the_prefetch_on_run_and_fails_the_case_on_an_error(tmp_path):
    case = tmp_path / "stale.toml"
    text = open(CASE).read().replace("misuse = 1", "misuse = 0")
    case.write_text(text.replace('"sanitizer_orch.cpp"', json.dumps(os.path.join(HERE, "kernels", "sanitizer", "sanitizer_orch.cpp")))
                    .replace('"kernel_misuse.cpp"', json.dumps(KERNEL)))
    status, out, err = pfsim_cli("check", str(case), "--sanitize", "--json")
    row = json.loads(out)["kernels"][0]
    assert status == 1 and row["verdict"] == "fail" and row["equal"]
    assert row["reason"] == "the sanitizer reported 1 error"
    assert row["sanitizer"]["findings"][1]["kind"] == "stale-completion"
    assert "========= misuse (prefetch on)" in err
    status, out, _ = pfsim_cli("check", str(case), "--sanitize", "--error-exitcode", "0", "--json")
    assert status == 0 and json.loads(out)["kernels"][0]["verdict"] == "pass"


def test_the_report_is_the_same_on_every_run():
    a = json.loads(pfsim_cli("run", CASE, "--arg", "misuse=4", "--sanitize", "--json")[1])["sanitizer"]
    b = json.loads(pfsim_cli("run", CASE, "--arg", "misuse=4", "--sanitize", "--json")[1])["sanitizer"]
    assert a == b and a["errors"] == 1


@pytest.mark.parametrize("target", [CASE, "prefetch_wait"])
def test_a_sanitized_run_computes_and_times_what_a_plain_run_does(target):
    plain = json.loads(pfsim_cli("run", target, "--json")[1])
    sanitized = json.loads(pfsim_cli("run", target, "--json", "--sanitize")[1])
    assert "sanitizer" not in plain and "sanitizer" in sanitized
    for key in ("kernel_time_ns", "cycles", "outputs", "l2", "gm", "sdma"):
        assert plain[key] == sanitized[key], key


# Out of bounds: kernel_bounds.cpp accesses one element past a 4000-byte tensor,
# inside its allocation's 4 KiB rounding (no fault, on the board or in pfsim),
# or, its twin, the last element.
BOUNDS_KERNEL = os.path.join(HERE, "kernels", "sanitizer", "kernel_bounds.cpp")
BOUNDS_CALLABLE = pfsim.Callable.from_dict({
    "orchestration": {"source": "kernels/sanitizer/bounds_orch.cpp",
                      "signature": [pfsim.ArgDirection.IN, pfsim.ArgDirection.INOUT]},
    "incores": [{"func_id": 0, "source": "kernels/sanitizer/kernel_bounds.cpp", "core_type": "aiv"}],
}, HERE)

# (access, its site, the tensor argument, bytes it moves, what it is)
ACCESSES = [(0, "load", 0, 4, "a scalar load"), (1, "tload", 0, 32, "a TLOAD"),
            (2, "store", 1, 4, "a scalar store"), (3, "tstore", 1, 32, "a TSTORE")]


def test_an_access_past_a_tensors_end_inside_its_allocation_is_reported_and_its_twin_is_clean():
    with pfsim.Worker() as worker:
        handle = worker.register(BOUNDS_CALLABLE)

        def run(access, fixed):
            return worker.run(handle, [torch.arange(1000, dtype=torch.float32), torch.zeros(1000), access, int(fixed), 1],
                              sanitize=True)
        for access, where, arg, size, what in ACCESSES:
            [f] = run(access, False).findings("out-of-bounds")
            assert f["severity"] == "error"
            assert f["what"] == (f"{what} of {size} bytes at offset 0 past the end of tensor argument {arg} (args[{arg}]), "
                                 "outside every tensor the task was given")
            assert f["site"]["where"] == marked_line(BOUNDS_KERNEL, f"// site: {where}")
            assert f["site"]["task"].startswith("task 0 (aiv, func 0) block 0")
            assert f["region"]["bytes"] == size
            assert "(4000 bytes); the access reaches 4 bytes past its end" in f["notes"][0]
            assert run(access, True).sanitizer["findings"] == [], what  # the last element: inside
        # A tensor starting 64 bytes into its allocation: the element before it.
        [f] = run(4, False).findings("out-of-bounds")
        assert f["what"] == ("a scalar load of 4 bytes 4 bytes before the start of tensor argument 0 (args[0]), "
                             "outside every tensor the task was given")
        assert f["site"]["where"] == marked_line(BOUNDS_KERNEL, "// site: before")
        assert "(3936 bytes); the access starts 4 bytes before it" in f["notes"][0]
        assert run(4, True).sanitizer["findings"] == []  # its first element


def test_the_cli_fails_a_run_that_reads_past_a_tensors_end():
    case = os.path.join(HERE, "kernels", "sanitizer", "bounds.toml")
    status, out, err = pfsim_cli("run", case, "--sanitize", "--json")
    assert status == 1, err
    assert json.loads(out)["sanitizer"]["errors"] == 1
    assert "========= ERROR: out of bounds: a scalar load of 4 bytes at offset 0 past the end of tensor argument 0" in err
    assert f"=========     at {marked_line(BOUNDS_KERNEL, '// site: load')}\n" in err
    status, _, err = pfsim_cli("run", case, "--sanitize", "--arg", "fixed=1")
    assert status == 0 and err.rstrip().endswith("ERROR SUMMARY: 0 errors, 0 warnings, 0 infos"), err
