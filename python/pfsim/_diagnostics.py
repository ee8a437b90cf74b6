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
# start and end on its core), 2 with the AICPU's (its dispatch and its taking of the completion).
# Levels 3 and 4 add the AICPU scheduler's and orchestrator's phase records, which pfsim does not model.
SWIMLANE_LEVELS = (1, 2)


def swimlane_records(result, level: int) -> dict:
    """simpler's chip_swimlane_records.json (the raw form its swimlane_converter reads) of one
    run, from its tasks' spans (Worker.run(spans=True)): level 1 or 2, in simulated time."""
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
    return {
        "chip_swimlane_level": level,
        "metadata": {"clock_freq_hz": SWIMLANE_CLOCK_HZ, "num_cores": 3 * clusters,
                     "core_types": ["aic"] * clusters + ["aiv"] * (2 * clusters), "producer": "pfsim"},
        "aicore_tasks": aicore,
        "aicpu_tasks": aicpu,
    }


def write_swimlane(path: Path, result, level: int) -> None:
    import json

    path.write_text(json.dumps(swimlane_records(result, level)))



def swimlane_level(asked: int) -> int:
    """The level pfsim writes for --enable-chip-swimlane ASKED (0: none): 3 and 4 are written
    as 2 (pfsim._harness warns of it when the session starts)."""
    return min(asked, max(SWIMLANE_LEVELS))


def swimlane_warning(asked: int) -> str | None:
    """What pfsim leaves out of --enable-chip-swimlane ASKED, or None."""
    if asked <= max(SWIMLANE_LEVELS):
        return None
    return (f"pfsim: warning: --enable-chip-swimlane {asked}: pfsim writes level 2 (each block's start and end on "
            "its core, the AICPU's dispatch and completion of it, in simulated time); the AICPU scheduler's and "
            "orchestrator's phase records of levels 3 and 4 are not modelled")


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
