"""The AICPU scheduler's launch rules: sync-start cohorts (all blocks at once,
the drain that keeps a stream of other tasks from starving them, a cohort wider
than the die refused), the early dispatch of an early-resolve producer's
consumers (on idle cores, then in busy cores' pending slots), and the
orchestration object kept loaded across runs."""

import os
import re
import shutil

import forked_pytest
import pytest
import torch

import pfsim

HERE = os.path.dirname(os.path.abspath(__file__))
LINES = 64  # stamp lines per output: more than the die's 48 vector cores


def callable_of(orchestration):
    return pfsim.Callable.from_dict({
        "orchestration": {"source": f"kernels/orchestration/{orchestration}"},
        "incores": [{"func_id": 0, "source": "kernels/aiv/kernel_stamp.cpp", "core_type": "aiv"}],
    }, HERE)


@pytest.fixture(scope="module")
def sync_start():
    with pfsim.Worker() as worker:
        handle = worker.register(callable_of("sync_start_orch.cpp"))

        def run(cohort_blocks, sync, blocker_blocks=46, blocker_hold=100, stream=0, stream_hold=1000, spans=False,
                threads=0):
            """Per-block start ticks of the blocker and the cohort, and the result
            (tasks: the blocker, the stream, the cohort); threads: aicpu_thread_num."""
            outs = [torch.zeros(LINES * 8, dtype=torch.int64) for _ in range(3)]
            r = worker.run(handle, outs + [blocker_blocks, blocker_hold, cohort_blocks, int(sync), stream,
                                          stream_hold], spans=spans, aicpu_thread_num=threads)
            return [o.reshape(LINES, 8)[:, 0] for o in outs[:2]], r
        yield run


def test_a_sync_start_cohort_starts_all_its_blocks_together_once_enough_cores_are_free(sync_start):
    # 46 of the 48 vector cores are held, block b for (b + 1) * 100 ticks: the
    # 8-block cohort fits once six of them have returned.
    (blocker, cohort), _ = sync_start(8, sync=True)
    starts = cohort[:8].tolist()
    assert len(set(starts)) == 1, starts
    assert starts[0] >= blocker[5] + 6 * 100
    # Negative control: without require_sync_start two blocks start at once on
    # the free cores, the others one by one as the blocker's return.
    (blocker, cohort), _ = sync_start(8, sync=False)
    starts = cohort[:8].tolist()
    assert len(set(starts)) > 1 and min(starts) < blocker[5] + 6 * 100, starts


def test_while_a_cohort_waits_for_cores_no_other_task_takes_one(sync_start):
    # Twenty single-block tasks submitted before the cohort would take every
    # core the blocker returns; once the cohort is ready, the drain keeps them
    # back until it is in: it starts before most of them.
    _, r = sync_start(8, sync=True, stream=20)
    stream, cohort = r.tasks[1:21], r.tasks[21]
    after = [t for t in stream if t.start_ns > cohort.start_ns]
    assert len(after) >= 10, [t.start_ns for t in stream] + [cohort.start_ns]
    # Negative control: without sync start the cohort is one more task in
    # submission order: every stream task starts before it.
    _, r = sync_start(8, sync=False, stream=20)
    assert all(t.start_ns < r.tasks[21].start_ns for t in r.tasks[1:21])


def test_a_cohort_that_waits_for_cores_goes_out_through_the_drain_as_its_swimlane_records_say(sync_start):
    from pfsim import _diagnostics

    _, r = sync_start(8, sync=True, spans=True)
    blocker, cohort = r.tasks[0], r.tasks[-1]
    (sent,) = {s["dispatch_ns"] for s in cohort.spans}  # all its blocks at once
    # ready soon after its submission, it waited for the blocker's cores to return
    assert blocker.drain_ns is None and cohort.submit_ns[1] <= cohort.drain_ns < sent, (cohort.drain_ns, sent)
    phases = _diagnostics.scheduler_phases(r.tasks)
    drain = [p for p in phases if p["kind"].startswith("drain")]
    assert [(p["kind"], p["tasks_processed"]) for p in drain] == [("drain", 8), ("drain_prepare", 8),
                                                                   ("drain_publish", 8)], drain
    assert drain[0]["start_ns"] == drain[1]["start_ns"] == drain[1]["end_ns"] == drain[2]["start_ns"] == sent
    assert drain[0]["end_ns"] == drain[2]["end_ns"] == cohort.spans[0]["start_ns"]  # until its blocks start
    assert sum(p["pop_hit"] for p in phases if p["kind"] == "dispatch") == len(r.tasks) - 1  # not a dispatch
    # negative controls: a cohort that fits when it is ready, and blocks without sync start, are dispatched
    for sync, blocker_blocks in ((True, 1), (False, 46)):
        _, r = sync_start(8, sync=sync, blocker_blocks=blocker_blocks, spans=True)
        assert r.tasks[-1].drain_ns is None
        phases = _diagnostics.scheduler_phases(r.tasks)
        assert not [p for p in phases if p["kind"].startswith("drain")]
        assert sum(p["pop_hit"] for p in phases if p["kind"] == "dispatch") >= len(r.tasks)


def cohort_clusters(task):
    """The clusters of a task's vector cores ("die.aivK" is in cluster K // 2)."""
    return {int(s["core"].rsplit("aiv", 1)[1]) // 2 for s in task.spans}


def test_a_cohort_fits_one_scheduler_thread_s_clusters_or_goes_through_the_global_drain(sync_start):
    from pfsim import _diagnostics

    # simpler's default 4 AICPU threads: 3 schedulers, thread t owning the clusters c % 3 == t
    # (16 vector cores each). The blocker's two blocks hold cluster 0 (thread 0's), so a
    # 16-block cohort fits only thread 1's clusters: it starts there, with no drain.
    _, r = sync_start(16, sync=True, blocker_blocks=2, blocker_hold=2000, spans=True)
    blocker, cohort = r.tasks[0], r.tasks[-1]
    assert cohort.spans[0]["start_ns"] < blocker.end_ns  # it did not wait for the blocker
    assert cohort.drain_ns is None and {c % 3 for c in cohort_clusters(cohort)} == {1}, cohort.spans
    # A 24-block cohort is wider than any one thread's 16: on an idle die it goes out at
    # once, through the global drain, over every thread's clusters.
    _, r = sync_start(24, sync=True, blocker_blocks=2, blocker_hold=2000, spans=True)
    cohort = r.tasks[-1]
    (sent,) = {s["dispatch_ns"] for s in cohort.spans}
    assert cohort.drain_ns == sent and {c % 3 for c in cohort_clusters(cohort)} == {0, 1, 2}
    drain = [(p["kind"], p["tasks_processed"]) for p in _diagnostics.scheduler_phases(r.tasks)
             if p["kind"].startswith("drain")]
    assert drain == [("drain", 24), ("drain_prepare", 24), ("drain_publish", 24)], drain
    # Negative control: aicpu_thread_num 2 is one scheduler owning all 48 vector cores: the
    # same cohort fits it, and no drain happens.
    _, r = sync_start(24, sync=True, blocker_blocks=2, blocker_hold=2000, spans=True, threads=2)
    assert r.tasks[-1].drain_ns is None
    assert not [p for p in _diagnostics.scheduler_phases(r.tasks) if p["kind"].startswith("drain")]
    with pytest.raises(ValueError, match=r"aicpu_thread_num = 5: simpler's a2a3 runs 1 to 4 AICPU threads"):
        sync_start(24, sync=True, threads=5)


def test_a_cohort_wider_than_the_die_is_refused_naming_the_task(sync_start):
    with pytest.raises(ValueError, match=r"fatal 7 \(PTO2_ERROR_REQUIRE_SYNC_START_INVALID\) at sync_start_orch.cpp:\d+: "
                                         r"task 1 \(aiv, func 0\): launch_spec.set_require_sync_start\(true\) with "
                                         r"block_num 49 > the die's 48 vector cores"):
        sync_start(49, sync=True)
    # Negative controls: a cohort of the whole die starts; without sync start any width runs.
    (_, cohort), _ = sync_start(48, sync=True, blocker_blocks=1)
    assert len(set(cohort[:48].tolist())) == 1
    sync_start(49, sync=False)


@pytest.fixture(scope="module")
def early():
    with pfsim.Worker() as worker:
        handle = worker.register(callable_of("early_orch.cpp"))

        def run(flagged, consumer_blocks, sync=True, hold=200, threads=0, blocker_blocks=0, blocker_hold=0):
            """The result (tasks: the blocker if it has blocks, the producer, the consumer) of a
            blocker holding its cores `blocker_hold` ticks per block index, then a producer
            holding its core `hold` ticks, flagged early-resolve or not, and its consumer."""
            outs = [torch.zeros(LINES * 8, dtype=torch.int64) for _ in range(3)]
            return worker.run(handle, outs + [int(flagged), consumer_blocks, int(sync), hold, blocker_blocks,
                                              blocker_hold], spans=True, aicpu_thread_num=threads)
        yield run


def test_a_consumer_of_an_early_resolve_producer_is_staged_on_idle_cores_and_started_by_its_doorbell(early):
    from pfsim import _diagnostics

    # One scheduler (aicpu_thread_num 2): the producer runs 4 us; its 8-block sync-start
    # consumer arrives meanwhile, finds nothing else ready, and is staged on 8 idle cores.
    r = early(True, 8, threads=2)
    producer, consumer = r.tasks
    (sent,) = {s["dispatch_ns"] for s in consumer.spans}
    assert consumer.early_ns == sent and consumer.submit_ns[1] <= sent < producer.end_ns, (consumer, producer)
    # its doorbell: the producer's completion starts it orch.doorbell_latency (0.2 us) later
    assert consumer.start_ns == pytest.approx(producer.end_ns + 200), (consumer.start_ns, producer.end_ns)
    assert len({s["start_ns"] for s in consumer.spans}) == 1  # all blocks at once
    phases = _diagnostics.scheduler_phases(r.tasks)
    assert [(p["kind"], p["tasks_processed"]) for p in phases if p["kind"] == "early_dispatch"] == \
        [("early_dispatch", 8)], phases
    # Three schedulers (simpler's default): a 16-block cohort fits one thread's clusters (thread
    # 0's 15 idle cores and the pending slot of the producer's) and is staged there; a 24-block
    # one fits none, so it is not staged, goes out when ready, and the run says the board would
    # have staged it through the global drain.
    r = early(True, 16)
    assert r.tasks[1].early_ns is not None and len(cohort_clusters(r.tasks[1])) == 8
    assert not [w for w in r.warnings if "set_allow_early_resolve" in w], r.warnings
    r = early(True, 24)
    assert r.tasks[1].early_ns is None and r.tasks[1].start_ns == pytest.approx(r.tasks[0].end_ns + 1000)
    assert [w for w in r.warnings if w.startswith("set_allow_early_resolve: ") and "global drain" in w], r.warnings
    # Without sync start a consumer is staged on as many idle cores as there are (47: the
    # producer holds one), then in busy cores' pending slots: its last block waits in the
    # producer's core's, and takes it when the producer's block ends; all start at the doorbell.
    r = early(True, 48, sync=False, threads=2)
    producer, consumer = r.tasks
    assert {s["dispatch_ns"] for s in consumer.spans} == {consumer.early_ns}
    assert producer.spans[0]["core"] in {s["core"] for s in consumer.spans}
    assert all(s["start_ns"] == pytest.approx(producer.end_ns + 200) for s in consumer.spans), consumer.spans
    # Negative control: without the flag nothing is staged; the consumer is dispatched once
    # the producer completed, orch.dispatch_latency (1 us) later, and no early_dispatch is written.
    r = early(False, 8, threads=2)
    producer, consumer = r.tasks
    assert consumer.early_ns is None and all(s["dispatch_ns"] == producer.end_ns for s in consumer.spans)
    assert consumer.start_ns == pytest.approx(producer.end_ns + 1000)
    assert not [p for p in _diagnostics.scheduler_phases(r.tasks) if p["kind"] == "early_dispatch"]


def test_a_consumer_that_finds_no_idle_core_is_staged_in_busy_cores_pending_slots(early):
    from pfsim import _diagnostics

    # One scheduler owns all 48 vector cores: a 47-block blocker holds 47 of them, block b for
    # (b + 1) * 100 ticks (2 us per index), the producer the last one for 200 ticks: no core is
    # idle when the 8-block sync-start consumer arrives. It is staged while the producer runs,
    # one block in the pending slot of each of 8 busy cores.
    r = early(True, 8, threads=2, blocker_blocks=47, blocker_hold=100)
    blocker, producer, consumer = r.tasks
    held = {s["core"]: s for s in blocker.spans}
    assert consumer.early_ns is not None and consumer.early_ns < producer.end_ns
    assert {s["dispatch_ns"] for s in consumer.spans} == {consumer.early_ns}
    cores = [s["core"] for s in consumer.spans]
    assert len(set(cores)) == 8 and all(held[c]["dispatch_ns"] < consumer.early_ns < held[c]["end_ns"] for c in cores)
    # The cohort starts together once its doorbell rang and the scheduler took the completions
    # of the blocks its cores ran (the rendezvous), orch.doorbell_latency (0.2 us) after the later.
    last = max(held[c]["finish_ns"] for c in cores)
    assert last > producer.end_ns
    assert all(s["start_ns"] == pytest.approx(last + 200) for s in consumer.spans), (last, consumer.spans)
    assert [(p["kind"], p["tasks_processed"]) for p in _diagnostics.scheduler_phases(r.tasks)
            if p["kind"] == "early_dispatch"] == [("early_dispatch", 8)]
    # simpler turns early dispatch off in PMU runs; pfsim stages anyway, and --enable-pmu says so.
    assert consumer.name in _diagnostics.pmu_early_warning(r)
    # Without sync start each block starts on its own, orch.doorbell_latency after the later of
    # the doorbell and its core's block ending (the core takes it from its pending slot itself).
    r = early(True, 8, sync=False, threads=2, blocker_blocks=47, blocker_hold=100)
    blocker, producer, consumer = r.tasks
    held = {s["core"]: s for s in blocker.spans}
    for s in consumer.spans:
        assert s["core"] in held
        assert s["start_ns"] == pytest.approx(max(producer.end_ns, held[s["core"]]["end_ns"]) + 200)
    assert len({s["start_ns"] for s in consumer.spans}) > 4  # the cores free one after another
    # Negative controls. With an idle core (a 46-block blocker) a one-block consumer is staged
    # there, not in a pending slot, and starts at the doorbell.
    r = early(True, 1, sync=False, threads=2, blocker_blocks=46, blocker_hold=100)
    blocker, producer, consumer = r.tasks
    (s,) = consumer.spans
    assert s["core"] not in {b["core"] for b in blocker.spans + producer.spans}
    assert s["dispatch_ns"] == consumer.early_ns and s["start_ns"] == pytest.approx(producer.end_ns + 200)
    # Without the flag nothing is staged: the cohort is dispatched once its producer completed and
    # 8 cores are free, orch.dispatch_latency (1 us) later.
    r = early(False, 8, threads=2, blocker_blocks=47, blocker_hold=100)
    blocker, producer, consumer = r.tasks
    assert consumer.early_ns is None and len({s["dispatch_ns"] for s in consumer.spans}) == 1
    (sent,) = {s["dispatch_ns"] for s in consumer.spans}
    assert sent >= producer.end_ns and all(s["start_ns"] == pytest.approx(sent + 1000) for s in consumer.spans)
    assert not [p for p in _diagnostics.scheduler_phases(r.tasks) if p["kind"] == "early_dispatch"]
    assert _diagnostics.pmu_early_warning(r) is None


def test_the_orchestration_object_stays_loaded_across_runs_of_a_worker():
    # As simpler's orchestration .so cache: a worker's later runs reuse the
    # loaded object (its statics carry over), each with its own arguments.
    tags = []
    with pfsim.Worker() as worker:
        handle = worker.register(callable_of("run_count_orch.cpp"))
        for _ in range(3):
            out = torch.zeros(8, dtype=torch.int64)
            worker.run(handle, [out])
            tags.append(int(out[1]))
    assert tags == [1, 2, 3]
    # Negative control: a fresh worker loads it afresh.
    with pfsim.Worker() as worker:
        out = torch.zeros(8, dtype=torch.int64)
        worker.run(worker.register(callable_of("run_count_orch.cpp")), [out])
    assert int(out[1]) == 1



MIB = 1 << 20


def test_an_ended_scope_gives_its_heap_ring_back(tmp_path):
    # simpler's heap_empty_ring_rebase: ring 1 (the scopes one level down) holds
    # 1.5 MiB; each of two consecutive scopes allocates 1 MiB in it.
    rings = [1 << 28, 3 * MIB // 2, 1 << 28, 1 << 28]
    with pfsim.Worker() as worker:
        handle = worker.register(callable_of("ring_heap_orch.cpp"))
        out = torch.zeros(8, dtype=torch.int64)
        worker.run(handle, [out, MIB // 4, 0], ring_heap=rings)
        assert int(out[1]) == 7
        # Negative control: both in one scope cannot fit, and nothing would give one back.
        with pytest.raises(ValueError, match=r"fatal 2 \(PTO2_ERROR_HEAP_RING_DEADLOCK\) at ring_heap_orch.cpp:\d+: "
                                             r"task 1 \(aiv, func 0\): heap ring 1 \(runtime_env.ring_heap\[1\] = "
                                             r"1572864 B\) cannot hold its 1048576 B output beside the 1048576 B the "
                                             r"open scopes of that ring hold"):
            worker.run(handle, [out, MIB // 4, 1], ring_heap=rings)
        # Without ring sizes (pfsim's one heap of orch.heap_bytes), both fit.
        worker.run(handle, [out, MIB // 4, 1])
        with pytest.raises(ValueError, match=r"runtime_env.ring_heap must be an int \(every ring\) or a list of 4"):
            worker.run(handle, [out, MIB // 4, 0], ring_heap=[0])


RING_SCENE = """
import torch
from pfsim.testing import ArgDirection as D
from pfsim.testing import SceneTestCase, TaskArgsBuilder, TensorArg, scene_test

@scene_test(level=2, runtime="tensormap_and_ringbuffer")
class TestRing(SceneTestCase):
    RTOL = ATOL = 0
    CALLABLE = {
        "orchestration": {"source": "kernels/orchestration/run_count_orch.cpp", "signature": [D.OUT]},
        "incores": [{"func_id": 0, "source": "kernels/aiv/kernel_stamp.cpp", "core_type": "aiv"}],
    }
    CASES = [{"name": "small", "platforms": ["a2a3sim"], "params": {}, CONFIG}]

    def generate_args(self, params):
        return TaskArgsBuilder(TensorArg("out", torch.zeros(8, dtype=torch.int64)))

    def compute_golden(self, args, params):
        pass
"""


@pytest.mark.parametrize("config, warned", [
    ('"config": {"runtime_env": {"ring_heap": [1 << 28, 1 << 20, 1 << 28, 1 << 28]}, "aicpu_thread_num": 2}',
     ["runtime_env.ring_heap"]),  # a level-2 run honours aicpu_thread_num (its scheduler threads)
    ('"config": {}', []),  # negative control
])
def test_config_settings_pfsim_does_not_model_are_warned_by_name(tmp_path, config, warned):
    shutil.copytree(os.path.join(HERE, "kernels"), tmp_path / "kernels")
    path = tmp_path / "test_ring.py"
    path.write_text(RING_SCENE.replace("CONFIG", config))
    r = forked_pytest.pfsim_test(path, "-p", "no:cacheprovider", "-q", "-s", "--skip-golden")
    assert r.returncode == 0, r.stdout + r.stderr
    found = re.findall(r"pfsim: warning: TestRing::small: config (\S+): .*not modelled", r.stdout + r.stderr)
    assert found == warned, r.stdout + r.stderr
