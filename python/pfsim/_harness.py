"""pfsim's scene-test harness under pytest, registered by pfsim.plugin: simpler's
options as simpler spells them, the fixtures simpler's tests take
(st_platform, st_worker, st_device_ids), the sdma marker, and a line per case
with its gain in the terminal summary. docs/python.md is the reference."""

from __future__ import annotations

import sys

import pytest

from . import _diagnostics, _simpler

# pfsim simulates an a2a3 die; `pfsim` is the platform's own name
PLATFORMS = ("pfsim", "a2a3sim", "a2a3")

# simpler's diagnostics options pfsim writes, in simpler's formats, under outputs/ (pfsim._diagnostics),
# with the levels each takes
WRITTEN = {"--dump-args": ("dump_args", (0, 1, 2, 3)),
           "--enable-chip-swimlane": ("enable_chip_swimlane", (0, 1, 2, 3, 4))}



def pytest_addoption(parser):
    group = parser.getgroup("pfsim", "pfsim scene tests (simpler's options)")
    group.addoption("--platform", default="pfsim", metavar="P",
                    help="the cases and tests to run: pfsim (default) those listed for a2a3 or a2a3sim, a2a3sim or "
                         "a2a3 those listed for it, as simpler selects; pfsim simulates an a2a3 die for each")
    group.addoption("--device", default="0", metavar="D",
                    help="device id or range (0, 4-7): st_device_ids; every pfsim worker is one die")
    group.addoption("--case", action="append", default=[], metavar="SEL",
                    help="run only matching cases: 'Case', 'Class::Case' or 'Class::' (repeatable)")
    group.addoption("--manual", default="exclude", choices=["exclude", "include", "only"],
                    help="manual cases: exclude (default), include, or run only them")
    group.addoption("--rounds", type=int, default=1, help="runs per worker (outputs reset between rounds)")
    group.addoption("--skip-golden", action="store_true", default=False, help="do not compare with the golden")
    group.addoption("--level", type=int, default=None,
                    help="run only the scene tests of this level: 2 (one die) or 3 (several dies)")
    group.addoption("--pfsim-set", action="append", default=[], metavar="KEY=VALUE",
                    help="a configuration setting for every worker of the session (repeatable), over a class's "
                         "PFSIM_SET: e.g. core.subblock_register=lane for kernels written against a2a3sim's register")
    group.addoption("--pfsim-trace", default=None, metavar="DIR",
                    help="write a Chrome trace (Perfetto) of every run into DIR")
    group.addoption("--pfsim-uncertainty", nargs="?", const="", default=None, metavar="KEY,...",
                    help="give each level-2 case's gain as a band: run it again at the ends of each parameter's "
                         "plausible range (the preset's [ranges]; all of them, or the keys named), one at a time, "
                         "then at the combinations pushing it lowest and highest (pfsim check --uncertainty)")
    group.addoption("--dump-args", dest="dump_args", nargs="?", const=1, type=int, default=0, metavar="LEVEL",
                    help="simpler's argument dump into outputs/CLASS_CASE_TIME/args_dump: 1 the arguments "
                         "CoreTaskArgs::dump marks, 2 every argument, 3 every argument with bytes of the marked")
    group.addoption("--enable-chip-swimlane", dest="enable_chip_swimlane", nargs="?", const=4, type=int, default=0,
                    metavar="LEVEL", help="simpler's swimlane records (chip_swimlane_records.json) in simulated time "
                                          "into outputs/CLASS_CASE_TIME: 1 AICore, 2 with the AICPU's dispatch and "
                                          "completion, 3 with the scheduler's phases, 4 (bare option) "
                                          "with the orchestrator's submissions")
    group.addoption("--enable-pmu", dest="enable_pmu", nargs="?", const=2, type=int, default=0, metavar="EVENT",
                    help="simpler's pmu.csv into outputs/CLASS_CASE_TIME: each block's cycles and its pipes' busy "
                         "cycles (2, PIPE_UTILIZATION, the one event group pfsim counts; the others are refused, "
                         "naming their counters)")
    group.addoption("--enable-dep-gen", dest="enable_dep_gen", action="store_true", default=False,
                    help="simpler's deps.json (the task graph: tasks, tensors, dependency edges) into "
                         "outputs/CLASS_CASE_TIME, and deps_viewer.txt where simpler's tools are installed")
    group.addoption("--enable-scope-stats", dest="enable_scope_stats", action="store_true", default=False,
                    help="simpler's scope statistics (scope_stats/scope_stats.jsonl) into outputs/CLASS_CASE_TIME")
    group.addoption("--enable-swimlane-overhead", dest="enable_swimlane_overhead", action="store_true",
                    default=False, help="with --enable-chip-swimlane (and --enable-dep-gen for its deps.json): "
                                        "simpler's swimlane_converter writes merged_swimlane.json beside the records "
                                        "with its Overhead Analysis tracks (where simpler is installed)")


def pytest_configure(config):
    config.addinivalue_line("markers", "sdma: the scene test needs a worker with enable_sdma=True")
    # simpler's markers of plain test functions (not scene-test classes)
    config.addinivalue_line("markers", "platforms(names): the platforms the test runs on (pfsim: when it lists a2a3 "
                                       "or a2a3sim)")
    config.addinivalue_line("markers", "runtime(name): the runtime the test needs (pfsim: tensormap_and_ringbuffer)")
    config.addinivalue_line("markers", "device_count(n): the devices the test needs (pfsim: st_device_ids, --device)")
    platform = config.getoption("--platform")
    if platform not in PLATFORMS:
        raise pytest.UsageError(f"pfsim: --platform {platform}: pfsim simulates an a2a3 die "
                                f"(--platform {' | '.join(PLATFORMS)})")
    level = config.getoption("--level")
    if level is not None and level not in (2, 3):
        raise pytest.UsageError(f"pfsim: --level {level}: pfsim runs level-2 (one die) and level-3 (several dies of "
                                "one node) scene tests; level 4 (a network of nodes) is not modelled")
    if config.getoption("--rounds") < 1:
        raise pytest.UsageError(f"pfsim: --rounds {config.getoption('--rounds')}: at least 1")
    for name, (dest, levels) in WRITTEN.items():
        if config.getoption(dest) not in levels:
            raise pytest.UsageError(f"pfsim: {name} {config.getoption(dest)}: not a value pfsim writes (it writes "
                                    f"{', '.join(map(str, levels))})")
    refused = _diagnostics.pmu_refusal(config.getoption("enable_pmu"))
    if refused:
        raise pytest.UsageError(refused)
    warning = _diagnostics.pmu_warning(config.getoption("enable_pmu"))
    if warning:
        print(warning, file=sys.stderr)
    from .testing import SESSION_SET

    for setting in config.getoption("--pfsim-set"):
        key, sep, value = setting.partition("=")
        if not sep or not key.strip():
            raise pytest.UsageError(f"pfsim: --pfsim-set {setting}: KEY=VALUE (a setting of `pfsim config`)")
        SESSION_SET[key.strip()] = value.strip()
    if config.getoption("enable_swimlane_overhead"):
        if not config.getoption("enable_chip_swimlane"):  # as simpler's harness
            raise pytest.UsageError("pfsim: --enable-swimlane-overhead requires --enable-chip-swimlane")
        if not config.getoption("enable_dep_gen"):
            print("pfsim: warning: --enable-swimlane-overhead without --enable-dep-gen: simpler's swimlane_converter "
                  "has no deps.json to find ready tasks in and leaves the Overhead Analysis tracks out",
                  file=sys.stderr)
    device_ids(config)


def device_ids(config) -> list[int]:
    """--device as a list of ids ('0', '4-7'); a usage error naming a bad value."""
    text = str(config.getoption("--device"))
    try:
        if "-" in text:
            first, last = (int(x) for x in text.split("-", 1))
            if last < first:
                raise ValueError
            return list(range(first, last + 1))
        return [int(text)]
    except ValueError:
        raise pytest.UsageError(f"pfsim: --device {text}: a device id or a range FIRST-LAST") from None


def pytest_collection_modifyitems(session, config, items):
    level = config.getoption("--level")
    if level is not None:  # simpler's filter: only the scene tests of that level
        kept = [i for i in items if getattr(getattr(i, "cls", None), "_st_level", None) == level]
        if len(kept) != len(items):
            config.hook.pytest_deselected(items=[i for i in items if i not in kept])
            items[:] = kept
    from .testing import platforms_skip_reason
    # A fixture nothing provides would only fail at setup, the test reported as an error:
    # a usage error here names it before anything runs.
    for item in items:
        platforms = item.get_closest_marker("platforms")
        reason = platforms and platforms.args and platforms_skip_reason(platforms.args[0],
                                                                        config.getoption("--platform"))
        if reason:
            item.add_marker(pytest.mark.skip(reason=reason))
        runtime = item.get_closest_marker("runtime")
        if runtime and runtime.args and runtime.args[0] != "tensormap_and_ringbuffer":
            item.add_marker(pytest.mark.skip(reason=f"runtime {runtime.args[0]!r}: pfsim runs tensormap_and_ringbuffer"))
        wanted = item.get_closest_marker("device_count")
        if wanted and wanted.args and int(wanted.args[0]) > len(device_ids(config)):
            raise pytest.UsageError(f"pfsim: {item.nodeid} needs {wanted.args[0]} devices (device_count) but --device "
                                    f"gives {len(device_ids(config))}; widen --device")
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        missing = [n for n in getattr(item, "fixturenames", []) if info and n not in info.name2fixturedefs
                   and n != "request"]
        if missing:
            raise pytest.UsageError(f"pfsim: {item.nodeid} uses fixture '{missing[0]}', which neither pfsim's harness "
                                    "(st_platform, st_worker, st_device_ids) nor the test's conftest.py provides")


def pytest_report_header(config):
    skipped = _simpler.skipped_conftests()
    if skipped:
        return [f"pfsim: simpler's own harness conftest.py not loaded (pfsim's plugin replaces it): {p}"
                for p in skipped]
    return None


@pytest.fixture(scope="session")
def st_platform(request) -> str:
    """The platform cases are selected for: a2a3 with --platform a2a3, else a2a3sim."""
    return "a2a3" if request.config.getoption("--platform") == "a2a3" else "a2a3sim"


@pytest.fixture(scope="session")
def st_device_ids(request) -> list[int]:
    return device_ids(request.config)


class _LazyWorker:
    """A pfsim.Worker started on first use (a class whose methods never touch
    st_worker costs no device process)."""

    def __init__(self, enable_sdma: bool):
        self._enable_sdma = enable_sdma
        self._worker = None

    def __getattr__(self, name):
        if self._worker is None:
            from . import Worker

            from .testing import SESSION_SET

            self._worker = Worker(enable_sdma=self._enable_sdma, set=dict(SESSION_SET))
        return getattr(self._worker, name)

    def close(self):
        if self._worker is not None:
            self._worker.close()
            self._worker = None


@pytest.fixture(scope="class")
def st_worker(request):
    """Level 2: one simulated die (a pfsim.Worker, started on first use) for the
    class. Level 3: a pfsim.level3.L3Worker with as many dies and sub-workers as
    the class's cases ask for, its callables registered (cls._st_chip_handles).
    enable_sdma when the class is marked sdma."""
    sdma = request.node.get_closest_marker("sdma") is not None
    cls = request.node.cls
    if cls is not None and getattr(cls, "_st_level", 2) == 3:
        worker, _ = cls._l3_worker(sdma)
        yield worker
        worker.close()
        return
    worker = _LazyWorker(enable_sdma=sdma)
    yield worker
    worker.close()


def case_rows(user_properties) -> list[dict]:
    """A test's cases, each its pfsim_* properties: a test that runs several cases (a class's own
    test_run) has a group per case, each opened by its pfsim_case."""
    rows = []
    for key, value in user_properties:
        if key == "pfsim_case":
            rows.append({})
        if key.startswith("pfsim_") and rows:
            rows[-1][key] = value
    return [r for r in rows if "pfsim_gain_pct" in r]


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    unshipped = _simpler.skipped_unshipped_conftests()
    if unshipped:
        terminalreporter.section("pfsim: conftest.py not loaded")
        for path in unshipped:
            terminalreporter.write_line(
                f"{path}: inside a simpler checkout, so taken for simpler's own harness, which pfsim's plugin "
                "replaces; simpler does not ship this file: to load it, put it outside the checkout")
    rows = []
    for key in ("passed", "failed"):
        for report in terminalreporter.stats.get(key, []):
            if getattr(report, "when", "call") != "call":
                continue
            cases = case_rows(report.user_properties)
            for props in cases:
                # a parametrized test names its case already; a class's own test_run does not
                nodeid = report.nodeid if report.nodeid.endswith("]") else f"{report.nodeid} (case {props['pfsim_case']})"
                rows.append((nodeid, props))
    if not rows:
        return
    terminalreporter.section("pfsim: prefetch off -> on")
    for nodeid, p in rows:
        terminalreporter.write_line(
            f"{nodeid}: {p['pfsim_time_off_ns'] / 1e3:.3f} us -> {p['pfsim_time_on_ns'] / 1e3:.3f} us, "
            f"gain {p['pfsim_gain_pct']:+.1f} %, L2 hit rate {100 * p['pfsim_l2_hit_rate_off']:.1f} % -> "
            f"{100 * p['pfsim_l2_hit_rate_on']:.1f} %" + band_text(p))


def band_text(props: dict) -> str:
    """A case's gain band (--pfsim-uncertainty) for the summary line, or nothing."""
    if "pfsim_gain_low_pct" not in props:
        return ""
    most = props["pfsim_gain_most_sensitive"]
    moved = f"moved most by {most}" if most else "no parameter moves it"
    return (f", band {props['pfsim_gain_low_pct']:+.1f}..{props['pfsim_gain_high_pct']:+.1f} % ({moved}; "
            f"sign {'holds' if props['pfsim_gain_sign_holds'] else 'CHANGES'})")
