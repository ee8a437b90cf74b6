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
# count its 50 MHz system counter; simpler's tools read the frequency from the metadata),
# from one nanosecond before the die started: simpler's tools read a timestamp of 0 as none,
# and the orchestrator's first submission begins at the die's first instant.
SWIMLANE_CLOCK_HZ = 1_000_000_000
SWIMLANE_EPOCH_NS = 1


def swimlane_cycles(ns: float) -> int:
    """A swimlane record's timestamp of the simulated time NS (ns since the die started)."""
    return round((ns + SWIMLANE_EPOCH_NS) * SWIMLANE_CLOCK_HZ / 1e9)


# Levels of simpler's --enable-chip-swimlane pfsim writes: 1 the AICore records (each block's
# start and end on its core), 2 with the AICPU's (its dispatch and its taking of the completion),
# 3 with the AICPU scheduler's phases (scheduler_phases), 4 with the orchestrator's submissions
# (orchestrator_phases).
SWIMLANE_LEVELS = (1, 2, 3, 4)

# The order of a scheduler's acts at one instant: a completion before the dispatch it makes
# possible, a sync-start cohort's drain before the other dispatches (sim_scheduler.cc).
_ACT_ORDER = {"complete": 0, "drain": 1, "dispatch": 2, "early_dispatch": 3}


def scheduler_phases(tasks) -> list[dict]:
    """The AICPU scheduler's phase records of level 3 (simpler's `aicpu_scheduler_phases` of one
    thread: pfsim writes its scheduler threads' acts as one lane) from the tasks' spans (Worker.run(spans=True)), times
    in simulated ns.

    pfsim's scheduler acts at instants and each act takes a fixed latency: a dispatch of the
    blocks it sends at one instant lasts until they start (orch.dispatch_latency), the taking
    of the completions that land at one instant lasts from their cores' end (orch.completion_latency).
    Each act is a record, in time order, cut at the next act's start (one thread does one thing
    at a time): "dispatch" with pop_hit, the tasks it took from the ready queue, and pop_miss 0
    (an event-driven scheduler never polls an empty queue); "complete" with tasks_processed, the
    blocks' subtasks whose completion it took. A sync-start cohort that fitted no one scheduler
    thread's free cores when it was ready (TaskTiming.drain_ns; while the die lacked them the
    scheduler dispatched nothing else) goes out through the global drain: a "drain" record with
    tasks_processed its blocks, holding "drain_prepare" (choosing its cores: no simulated time
    in pfsim) and "drain_publish" (sending its subtasks, until they start), each with its
    subtasks. A consumer staged early (TaskTiming.early_ns: its producers set_allow_early_resolve,
    nothing was ready) is an "early_dispatch" record with tasks_processed the blocks it sent to
    idle cores or busy cores' pending slots, lasting until they start (its doorbell). loop_iter numbers the acts from 1."""
    acts = {}  # (start, kind) -> [end, task ids, blocks, subtasks]
    for t in tasks:
        for s in t.spans:
            dispatch_kind = "early_dispatch" if s["dispatch_ns"] == t.early_ns else \
                "dispatch" if t.drain_ns is None else "drain"
            for key, end in (((s["dispatch_ns"], dispatch_kind), s["start_ns"]), ((s["end_ns"], "complete"), s["finish_ns"])):
                act = acts.setdefault(key, [end, set(), set(), 0])
                act[0] = max(act[0], end)
                act[1].add(t.task_id)
                act[2].add((t.task_id, s["block"]))
                act[3] += 1
    order = sorted(acts, key=lambda key: (key[0], _ACT_ORDER[key[1]]))
    records = []
    for i, (start, kind) in enumerate(order):
        end, task_ids, blocks, subtasks = acts[(start, kind)]
        if i + 1 < len(order):
            end = min(end, order[i + 1][0])
        record = {"kind": kind, "start_ns": start, "end_ns": end, "loop_iter": i + 1}
        if kind == "dispatch":
            records.append({**record, "pop_hit": len(task_ids), "pop_miss": 0})
        elif kind == "complete":
            records.append({**record, "tasks_processed": subtasks})
        elif kind == "early_dispatch":
            records.append({**record, "tasks_processed": len(blocks)})
        else:
            records += [{**record, "tasks_processed": len(blocks)},
                        {**record, "kind": "drain_prepare", "end_ns": start, "tasks_processed": subtasks},
                        {**record, "kind": "drain_publish", "tasks_processed": subtasks}]
    return records


def orchestrator_phases(tasks) -> list[dict]:
    """The orchestrator's records of level 4 (simpler's `aicpu_orchestrator_phases` of its one
    thread): one per submission (a task or an alloc_tensors), in submission order, from when the
    orchestration called it to when the task reached the scheduler (TaskTiming.submit_ns: the
    orchestrator's simulated clock, orch.submit_cost and any wait for ring space), times in ns."""
    return [{"submit_idx": i, "task_id": t.task_id, "start_ns": t.submit_ns[0], "end_ns": t.submit_ns[1]}
            for i, t in enumerate(tasks) if t.submit_ns is not None]


def swimlane_records(result, level: int) -> dict:
    """simpler's chip_swimlane_records.json (the raw form its swimlane_converter reads) of one
    run, from its tasks' spans (Worker.run(spans=True)): level 1 to 4, in simulated time."""
    if level not in SWIMLANE_LEVELS:
        raise ValueError(f"swimlane level {level}: pfsim writes levels {SWIMLANE_LEVELS}")
    spans = [(t, s) for t in result.tasks for s in t.spans]
    # pfsim numbers the cores AIC 0..C-1, then AIV C..3C-1 ("die.aivK" is core C + K)
    names = [(s["core"].rsplit(".", 1)[-1], s["core_id"]) for _, s in spans]
    clusters = next((core_id - int(name[3:]) for name, core_id in names if name.startswith("aiv")), None)
    if clusters is None:
        clusters = 1 + max((s["core_id"] for _, s in spans), default=-1)

    def in_cycles(r):
        return {**{k: v for k, v in r.items() if not k.endswith("_ns")},
                "start_cycles": swimlane_cycles(r["start_ns"]), "end_cycles": swimlane_cycles(r["end_ns"])}

    aicore, aicpu, dispatches = [], [], {}
    for t, s in spans:
        reg = dispatches[s["core_id"]] = dispatches.get(s["core_id"], 0) + 1  # the core's n-th dispatch
        times = [swimlane_cycles(s[k]) for k in ("dispatch_ns", "start_ns", "end_ns", "finish_ns")]
        aicore.append([s["core_id"], t.task_id, reg, times[1], times[2], 0])
        if level >= 2:
            aicpu.append([s["core_id"], reg, times[0], times[3]])
    records = {
        "chip_swimlane_level": level,
        "metadata": {"clock_freq_hz": SWIMLANE_CLOCK_HZ, "num_cores": 3 * clusters,
                     "core_types": ["aic"] * clusters + ["aiv"] * (2 * clusters), "producer": "pfsim"},
        "aicore_tasks": aicore,
        "aicpu_tasks": aicpu,
    }
    if level >= 3:
        records["metadata"]["core_to_thread"] = [0] * (3 * clusters)  # the threads' acts are one lane
        records["aicpu_scheduler_phases"] = [[in_cycles(r) for r in scheduler_phases(result.tasks)]]
    if level >= 4:
        records["aicpu_orchestrator_phases"] = [[in_cycles(r) for r in orchestrator_phases(result.tasks)]]
    return records


def write_swimlane(path: Path, result, level: int) -> None:
    import json

    path.write_text(json.dumps(swimlane_records(result, level)))



def _simpler_tool(option: str, tool: str, args: list[str]) -> str | None:
    """Runs simpler's `simpler_setup.tools.TOOL` with ARGS from the simpler installed beside
    pfsim (pfsim ships none of simpler's tools), as simpler's harness does after a case for
    OPTION; returns why it could not (None when it ran)."""
    import os
    import subprocess
    import sys

    from ._simpler import real_locations

    roots = [os.path.dirname(p) for p in real_locations("simpler_setup")
             if os.path.isfile(os.path.join(p, "tools", f"{tool}.py"))]
    if not roots:
        return f"{option}: simpler's simpler_setup.tools.{tool} is not installed beside pfsim"
    # simpler's tools import its `simpler` package too: in a checkout, python/ beside simpler_setup/
    paths = [roots[0], *[p for p in [os.path.join(roots[0], "python")] if os.path.isdir(p)]]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([*paths, *filter(None, [os.environ.get("PYTHONPATH")])]))
    done = subprocess.run([sys.executable, "-m", f"simpler_setup.tools.{tool}", *args], env=env,
                          capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        return (f"{option}: simpler's {tool} failed on {args[0]} "
                f"(exit {done.returncode}): {done.stderr.strip().splitlines()[-1:]}")
    return None


def deps_viewer_text(deps_json: Path) -> str | None:
    """What simpler's harness does after a dep-gen case: its deps_viewer writes deps_viewer.txt
    beside deps.json. Returns why it could not (None when it wrote the file)."""
    why = _simpler_tool("--enable-dep-gen", "deps_viewer", [str(deps_json), "--format", "text"])
    return why and why.replace("--enable-dep-gen: ", "--enable-dep-gen: deps_viewer.txt not written: ", 1)


def overhead_trace(records: Path) -> str | None:
    """What simpler's harness does after a case with --enable-swimlane-overhead: its
    swimlane_converter turns the records into a Perfetto trace, merged_swimlane.json beside them,
    with its Overhead Analysis counter tracks (each engine's idle cores, ready tasks and
    overhead, computed from the records and deps.json beside them). Returns why it could not
    (None when it wrote the file)."""
    why = _simpler_tool("--enable-swimlane-overhead", "swimlane_converter", [str(records), "--overhead"])
    return why and why.replace(": ", ": merged_swimlane.json not written: ", 1)


# simpler's --enable-pmu event groups pfsim counts, and its columns for each: the busy time
# of each of the core's pipes while the block ran (a2a3's PIPE_UTILIZATION)
PMU_EVENTS = {2: "PIPE_UTILIZATION"}
PMU_PIPES = (("vec_busy_cycles", "vector"), ("cube_busy_cycles", "cube"), ("scalar_busy_cycles", "scalar"),
             ("mte2_busy_cycles", "mte2"), ("mte3_busy_cycles", "mte3"))
# PIPE_UTILIZATION's counters pfsim has no counterpart of, and why (pmu_warning)
PMU_UNWRITTEN = {2: "mte1_busy_cycles (pfsim times L1 -> L0/UB moves on its MTE2 pipe: they are in "
                    "mte2_busy_cycles), icache_miss and icache_req (pfsim models no instruction cache)"}
# simpler's other a2a3 event groups (its PmuEventType), the counters each holds, and why pfsim
# has none of them per core: --enable-pmu N for these is a usage error naming them (pmu_refusal)
PMU_REFUSED = {
    1: ("ARITHMETIC_UTILIZATION", "cube_fp16_exec, cube_int8_exec, vec_fp32_exec, vec_fp16_128lane_exec, "
        "vec_fp16_64lane_exec, vec_int32_exec, vec_misc_exec",
        "pfsim times each vector and cube instruction on its pipe but counts no issues per data type or lane width"),
    4: ("MEMORY", "ub_read_req, ub_write_req, l1_read_req, l1_write_req, l2_read_req, l2_write_req, main_read_req, "
        "main_write_req", "pfsim counts the bytes each core's MTE2 and MTE3 moved, not requests per memory level; "
        "its L2 and GM count die-wide"),
    5: ("MEMORY_L0", "l0a_read_req, l0a_write_req, l0b_read_req, l0b_write_req, l0c_read_req, l0c_write_req",
        "pfsim times L0 moves on the pipes but counts no L0 requests"),
    6: ("RESOURCE_CONFLICT", "bankgroup_stall_cycles, bank_stall_cycles, vec_resc_conflict_cycles",
        "pfsim models no UB banks or vector resource conflicts"),
    7: ("MEMORY_UB", "ub_read_bw_mte, l2_write_bw, main_mem_write_bw, ub_write_bw_mte, ub_read_bw_vector, "
        "ub_write_bw_vector, ub_read_bw_scalar, ub_write_bw_scalar",
        "pfsim counts bytes per core's MTE2 and MTE3, not the board's bandwidth units per UB agent; "
        "its L2 and GM count die-wide"),
    8: ("L2_CACHE", "write_cache_hit, write_cache_miss_allocate, r0_read_cache_hit, r0_read_cache_miss_allocate, "
        "r1_read_cache_hit, r1_read_cache_miss_allocate",
        "pfsim's L2 counts hits and allocations die-wide (`pfsim stats`), not per core and read port"),
}


def pmu_refusal(event_type: int) -> str | None:
    """Why pfsim does not write --enable-pmu EVENT_TYPE (a usage error), or None when it does (0: off)."""
    if event_type == 0 or event_type in PMU_EVENTS:
        return None
    if event_type in PMU_REFUSED:
        name, counters, why = PMU_REFUSED[event_type]
        return (f"pfsim: --enable-pmu {event_type} ({name}): pfsim has none of its counters ({counters}): {why}; "
                f"it writes {', '.join(f'{n} ({e})' for n, e in PMU_EVENTS.items())}")
    return (f"pfsim: --enable-pmu {event_type}: not an a2a3 event group (simpler's are "
            f"{', '.join(map(str, sorted([*PMU_EVENTS, *PMU_REFUSED])))})")


def pmu_warning(event_type: int) -> str | None:
    """What pfsim leaves out of --enable-pmu EVENT_TYPE's columns, or None."""
    if event_type not in PMU_UNWRITTEN:
        return None
    return (f"pfsim: warning: --enable-pmu {event_type} ({PMU_EVENTS[event_type]}): pmu.csv has no "
            f"{PMU_UNWRITTEN[event_type]}")


def pmu_early_warning(result) -> str | None:
    """Why a PMU run's times differ from the board's when consumers were staged early, or None:
    simpler's scheduler turns early dispatch and pending slots off while the PMU counts (single-issue
    windows); pfsim's scheduler does not know the PMU is on and staged them (TaskTiming.early_ns)."""
    early = [t.name for t in result.tasks if t.early_ns is not None]
    if not early:
        return None
    return (f"--enable-pmu: simpler turns early dispatch (set_allow_early_resolve) off in PMU runs; pfsim "
            f"staged {', '.join(early[:4])}{' and others' if len(early) > 4 else ''} early, so pmu.csv's times "
            f"can differ from the board's PMU run by up to about orch.dispatch_latency per staged task")


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
