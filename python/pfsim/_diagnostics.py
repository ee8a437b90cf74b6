"""simpler's diagnostics, written from the simulated device into simpler's
per-case folders: `outputs/CLASS_CASE_TIME/` (simpler's _build_output_prefix),
the prefetch-on run there and the prefetch-off run in its `prefetch_off/`.
docs/python.md#diagnostics is the reference."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path


def output_prefix(outputs: Path, case_label: str) -> Path:
    """outputs/LABEL_YYYYmmdd_HHMMSS, made (LABEL with simpler's file-name sanitizing)."""
    from .testing import _sanitize_for_filename

    prefix = outputs / f"{_sanitize_for_filename(case_label)}_{datetime.now().strftime('%Y%m%d_%H%M%S')}"
    prefix.mkdir(parents=True, exist_ok=True)
    return prefix


def run_dir(prefix: Path, prefetch: bool) -> Path:
    """Where one run's diagnostics go: the prefix itself for prefetch on, prefix/prefetch_off for off."""
    path = prefix if prefetch else prefix / "prefetch_off"
    path.mkdir(parents=True, exist_ok=True)
    return path


# The timestamps of pfsim's swimlane records count simulated nanoseconds (the board's
# count its 50 MHz system counter; simpler's tools read the frequency from the metadata).
SWIMLANE_CLOCK_HZ = 1_000_000_000
# Levels of simpler's --enable-chip-swimlane pfsim writes: 1 the AICore records (each block's
# start and end on its core), 2 with the AICPU's (its dispatch and its taking of the completion),
# 3 with the AICPU scheduler's phases (scheduler_phases). Level 4 adds the orchestrator's
# per-submission phases, which pfsim writes as 3 (swimlane_warning).
SWIMLANE_LEVELS = (1, 2, 3)


def scheduler_phases(spans) -> list[dict]:
    """The AICPU scheduler's phase records of level 3 (simpler's `aicpu_scheduler_phases` of one
    thread: pfsim simulates one scheduler) from the blocks' spans, times in simulated ns.

    pfsim's scheduler acts at instants and each act takes a fixed latency: a dispatch of the
    blocks it sends at one instant lasts until they start (orch.dispatch_latency), the taking
    of the completions that land at one instant lasts from their cores' end (orch.completion_latency).
    Each act is one record, in time order, cut at the next record's start (one thread does one
    thing at a time): "dispatch" with pop_hit, the tasks it took from the ready queue, and
    pop_miss 0 (an event-driven scheduler never polls an empty queue); "complete" with
    tasks_processed, the blocks whose completion it took. loop_iter numbers the acts from 1."""
    acts = {}  # (start, kind) -> [end, task ids, blocks]
    for task_id, s in spans:
        for key, end in (((s["dispatch_ns"], "dispatch"), s["start_ns"]), ((s["end_ns"], "complete"), s["finish_ns"])):
            act = acts.setdefault(key, [end, set(), 0])
            act[0] = max(act[0], end)
            act[1].add(task_id)
            act[2] += 1
    order = sorted(acts)  # by start; a completion before the dispatch it makes possible
    records = []
    for i, (start, kind) in enumerate(order):
        end, tasks, blocks = acts[(start, kind)]
        if i + 1 < len(order):
            end = min(end, order[i + 1][0])
        record = {"kind": kind, "start_ns": start, "end_ns": end, "loop_iter": i + 1}
        if kind == "dispatch":
            record.update(pop_hit=len(tasks), pop_miss=0)
        else:
            record["tasks_processed"] = blocks
        records.append(record)
    return records


def swimlane_records(result, level: int) -> dict:
    """simpler's chip_swimlane_records.json (the raw form its swimlane_converter reads) of one
    run, from its tasks' spans (Worker.run(spans=True)): level 1, 2 or 3, in simulated time."""
    if level not in SWIMLANE_LEVELS:
        raise ValueError(f"swimlane level {level}: pfsim writes levels {SWIMLANE_LEVELS}")
    spans = [(t, s) for t in result.tasks for s in t.spans]
    # pfsim numbers the cores AIC 0..C-1, then AIV C..3C-1 ("die.aivK" is core C + K)
    names = [(s["core"].rsplit(".", 1)[-1], s["core_id"]) for _, s in spans]
    clusters = next((core_id - int(name[3:]) for name, core_id in names if name.startswith("aiv")), None)
    if clusters is None:
        clusters = 1 + max((s["core_id"] for _, s in spans), default=-1)
    aicore, aicpu, dispatches = [], [], {}
    for t, s in spans:
        reg = dispatches[s["core_id"]] = dispatches.get(s["core_id"], 0) + 1  # the core's n-th dispatch
        cycles = [round(s[k] * SWIMLANE_CLOCK_HZ / 1e9) for k in ("dispatch_ns", "start_ns", "end_ns", "finish_ns")]
        aicore.append([s["core_id"], t.task_id, reg, cycles[1], cycles[2], 0])
        if level >= 2:
            aicpu.append([s["core_id"], reg, cycles[0], cycles[3]])
    records = {
        "chip_swimlane_level": level,
        "metadata": {"clock_freq_hz": SWIMLANE_CLOCK_HZ, "num_cores": 3 * clusters,
                     "core_types": ["aic"] * clusters + ["aiv"] * (2 * clusters), "producer": "pfsim"},
        "aicore_tasks": aicore,
        "aicpu_tasks": aicpu,
    }
    if level >= 3:
        def cycles(ns):
            return round(ns * SWIMLANE_CLOCK_HZ / 1e9)

        records["metadata"]["core_to_thread"] = [0] * (3 * clusters)  # every core served by the one scheduler
        records["aicpu_scheduler_phases"] = [[
            {**{k: v for k, v in r.items() if not k.endswith("_ns")},
             "start_cycles": cycles(r["start_ns"]), "end_cycles": cycles(r["end_ns"])}
            for r in scheduler_phases([(t.task_id, s) for t, s in spans])]]
    return records


def write_swimlane(path: Path, result, level: int) -> None:
    import json

    path.write_text(json.dumps(swimlane_records(result, level)))



def swimlane_level(asked: int) -> int:
    """The level pfsim writes for --enable-chip-swimlane ASKED (0: none): 4 is written as 3
    (pfsim._harness warns of it when the session starts)."""
    return min(asked, max(SWIMLANE_LEVELS))


def swimlane_warning(asked: int) -> str | None:
    """What pfsim leaves out of --enable-chip-swimlane ASKED, or None."""
    if asked <= max(SWIMLANE_LEVELS):
        return None
    return (f"pfsim: warning: --enable-chip-swimlane {asked}: pfsim writes level 3 (each block on its core, the "
            "AICPU's dispatch and completion of it, the scheduler's phases, in simulated time); the orchestrator's "
            "per-submission phase records of level 4 are not written")


def deps_viewer_text(deps_json: Path) -> str | None:
    """What simpler's harness does after a dep-gen case: its deps_viewer writes deps_viewer.txt
    beside deps.json. Runs the deps_viewer of the simpler installed beside pfsim (pfsim ships
    none of simpler's tools); returns why it could not (None when it wrote the file)."""
    import os
    import subprocess
    import sys

    from ._simpler import real_locations

    roots = [os.path.dirname(p) for p in real_locations("simpler_setup")
             if os.path.isfile(os.path.join(p, "tools", "deps_viewer.py"))]
    if not roots:
        return ("--enable-dep-gen: deps_viewer.txt not written: simpler's "
                "simpler_setup.tools.deps_viewer is not installed beside pfsim")
    # simpler's tools import its `simpler` package too: in a checkout, python/ beside simpler_setup/
    paths = [roots[0], *[p for p in [os.path.join(roots[0], "python")] if os.path.isdir(p)]]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([*paths, *filter(None, [os.environ.get("PYTHONPATH")])]))
    done = subprocess.run([sys.executable, "-m", "simpler_setup.tools.deps_viewer", str(deps_json),
                           "--format", "text"], env=env, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        return (f"--enable-dep-gen: simpler's deps_viewer failed on {deps_json} "
                f"(exit {done.returncode}): {done.stderr.strip().splitlines()[-1:]}")
    return None


# simpler's --enable-pmu event groups pfsim counts, and its columns for each: the busy time
# of each of the core's pipes while the block ran (a2a3's PIPE_UTILIZATION; pfsim has no MTE1,
# instruction-cache or memory-request counters, so the other groups and those columns are absent)
PMU_EVENTS = {2: "PIPE_UTILIZATION"}
PMU_PIPES = (("vec_busy_cycles", "vector"), ("cube_busy_cycles", "cube"), ("scalar_busy_cycles", "scalar"),
             ("mte2_busy_cycles", "mte2"), ("mte3_busy_cycles", "mte3"))


def pmu_csv(result, event_type: int, clock_hz: float) -> str:
    """simpler's pmu.csv of one run (Worker.run(spans=True)): a row per block per core, its
    cycles at the core clock `clock_hz` from start to end and each pipe's busy cycles."""
    if event_type not in PMU_EVENTS:
        raise ValueError(f"PMU event type {event_type}: pfsim counts {sorted(PMU_EVENTS)}")

    def cycles(ns):
        return round(ns * clock_hz / 1e9)

    lines = [",".join(["thread_id", "core_id", "task_id", "func_id", "core_type", "pmu_total_cycles",
                       *(name for name, _ in PMU_PIPES), "event_type"])]
    for t in result.tasks:
        for s in t.spans:
            core_type = 0 if s["core"].rsplit(".", 1)[-1].startswith("aic") else 1
            lines.append(",".join(map(str, [0, s["core_id"], f"0x{t.task_id:016x}", s["func_id"], core_type,
                                            cycles(s["end_ns"] - s["start_ns"]),
                                            *(cycles(s["busy_ns"][pipe]) for _, pipe in PMU_PIPES), event_type])))
    return "\n".join(lines) + "\n"
