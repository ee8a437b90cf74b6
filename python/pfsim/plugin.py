"""The pfsim pytest plugin (`pytest -p pfsim.plugin`, or what `pfsim test` loads):
simpler's scene-test options, the sdma marker, and a line per case with its
gain in the terminal summary."""

from __future__ import annotations


def pytest_addoption(parser):
    group = parser.getgroup("pfsim", "pfsim scene tests")
    group.addoption("--platform", default="a2a3", help="accepted for simpler's command lines; pfsim simulates a2a3")
    group.addoption("--device", default="0", help="accepted for simpler's command lines; every worker is one die")
    group.addoption("--case", action="append", default=[], metavar="SEL",
                    help="run only matching cases: 'Case', 'Class::Case' or 'Class::' (repeatable)")
    group.addoption("--manual", default="exclude", choices=["exclude", "include", "only"],
                    help="manual cases: exclude (default), include, or run only them")
    group.addoption("--rounds", type=int, default=1, help="runs per worker (outputs reset between rounds)")
    group.addoption("--skip-golden", action="store_true", default=False, help="do not compare with the golden")
    group.addoption("--pfsim-trace", default=None, metavar="DIR",
                    help="write a Chrome trace (Perfetto) of every run into DIR")


def pytest_configure(config):
    config.addinivalue_line("markers", "sdma: the scene test needs a worker with enable_sdma=True")


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    rows = []
    for key in ("passed", "failed"):
        for report in terminalreporter.stats.get(key, []):
            if getattr(report, "when", "call") != "call":
                continue
            props = dict(report.user_properties)
            if "pfsim_gain_pct" in props:
                rows.append((report.nodeid, props))
    if not rows:
        return
    terminalreporter.section("pfsim: prefetch off -> on")
    for nodeid, p in rows:
        terminalreporter.write_line(
            f"{nodeid}: {p['pfsim_time_off_ns'] / 1e3:.3f} us -> {p['pfsim_time_on_ns'] / 1e3:.3f} us, "
            f"gain {p['pfsim_gain_pct']:+.1f} %, L2 hit rate {100 * p['pfsim_l2_hit_rate_off']:.1f} % -> "
            f"{100 * p['pfsim_l2_hit_rate_on']:.1f} %")
