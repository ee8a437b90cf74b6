"""TPUSH / TPOP: the cube<->vector FIFO of a cluster (slots in GM, handshake on
cross-core flags) in a mixed task, against torch, at its limits and when the
protocol is broken."""

import contextlib
import os
import re
import warnings

import pytest
import torch

import pfsim

HERE = os.path.dirname(os.path.abspath(__file__))
M, K, N = 32, 32, 32
C2V_UP_DOWN, C2V_LEFT_RIGHT, V2C_UP_DOWN, C2V_ONE_SLOT, C2V_NO_ALLOCATE = 0, 1, 2, 3, 4
POP_ONE_MORE, CUBE_POPS, SLOT_TOO_SMALL, NEVER_POPPED, SET_NOT_WAITED, ONE_VECTOR_SETS = 5, 6, 7, 8, 9, 10
C2V_UP_DOWN_A2A3SIM, V2C_UP_DOWN_A2A3SIM = 11, 12  # the lane read from get_subblockid(), as on a2a3sim
WORK_THEN_WAIT, WORK_ONLY = 13, 14


@contextlib.contextmanager
def tpipe_worker(**settings):
    """run(SCENARIO, tiles, seed) on a worker with SETTINGS: (result, Y, the A_t B products)."""
    source = os.path.join(HERE, "kernels/mix/kernel_tpipe.cpp")
    with pfsim.Worker(set=settings) as worker:
        handle = worker.register(pfsim.Callable(
            orchestration=os.path.join(HERE, "kernels/orchestration/tpipe_orch.cpp"),
            incores=[{"func_id": 0, "source": source, "core_type": "aic"},
                     {"func_id": 1, "source": source, "core_type": "aiv"}]))

        def run(scenario, tiles=4, seed=5):
            g = torch.Generator().manual_seed(seed)
            a = torch.randn(tiles * M, K, generator=g).half()
            b = torch.randn(K, N, generator=g).half()
            y = torch.zeros(tiles * M, N)
            fifo = torch.zeros(4 * M * N * 4, dtype=torch.uint8)
            result = worker.run(handle, [a, b, y, fifo, scenario, tiles])
            products = torch.cat([a[t * M:(t + 1) * M].float() @ b.float() for t in range(tiles)])
            return result, y, products
        yield run


@pytest.fixture(scope="module")
def tpipe():
    with tpipe_worker() as run:  # the preset's core.subblock_register: zero, the board's
        yield run


@pytest.mark.parametrize("scenario", [C2V_UP_DOWN, C2V_LEFT_RIGHT, C2V_ONE_SLOT], ids=["up-down", "left-right", "one-slot"])
def test_cube_to_vector_tiles_arrive_whole_and_in_order(tpipe, scenario):
    _, y, products = tpipe(scenario, tiles=5)
    torch.testing.assert_close(y, products + 1, rtol=1e-5, atol=1e-4)


def test_vector_to_cube_halves_make_the_cube_operand(tpipe):
    _, y, products = tpipe(V2C_UP_DOWN, tiles=5)
    torch.testing.assert_close(y, products, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("register", ["zero", "lane"])
@pytest.mark.parametrize("written_for", ["board", "a2a3sim"])
@pytest.mark.parametrize("direction", ["c2v", "v2c"])
def test_a_lane_split_is_right_under_the_register_its_kernel_was_written_for(register, written_for, direction):
    """A kernel written for the board takes its lane from get_sub_block_id(args) and its part of a slot
    as the pipe's entry offset, for TPUSH/TPOP add get_subblockid(), which reads 0 there (zero, the
    preset); one written against a2a3sim reads the lane from get_subblockid() and leaves the offset to
    TPUSH/TPOP (lane). Each is right only under its own setting: the other is its negative control
    (vector core 1's part lands on vector core 0's, or in the neighbouring slot). The a2a3sim-written
    kernel under zero is warned about, naming the setting; nothing else is."""
    scenario = {("c2v", "board"): C2V_UP_DOWN, ("c2v", "a2a3sim"): C2V_UP_DOWN_A2A3SIM,
                ("v2c", "board"): V2C_UP_DOWN, ("v2c", "a2a3sim"): V2C_UP_DOWN_A2A3SIM}[direction, written_for]
    # A worker of its own: the register is a setting of its die.
    with warnings.catch_warnings(record=True) as issued, tpipe_worker(**{"core.subblock_register": register}) as run:
        warnings.simplefilter("always")
        result, y, products = run(scenario, tiles=3)
    # a run's warnings reach the test as PfsimWarning too, not only in its result
    assert [str(w.message) for w in issued if issubclass(w.category, pfsim.PfsimWarning)] == result.warnings
    expected = products + 1 if direction == "c2v" else products
    right = torch.allclose(y, expected, rtol=1e-5, atol=1e-4)
    assert right == ((register == "zero") == (written_for == "board")), (y - expected).abs().max()
    instruction = "TPOP" if direction == "c2v" else "TPUSH"
    warned = [w for w in result.warnings if "core.subblock_register = lane" in w]
    if register == "zero" and written_for == "a2a3sim":
        assert any(f"{instruction} (TILE_UP_DOWN) on vector core 1: get_subblockid() reads 0" in w
                   for w in warned), result.warnings
    else:
        assert not warned, warned


def test_one_slot_makes_the_producer_wait_for_every_free(tpipe):
    """The FIFO depth is a limit: with one slot the cube waits for each tile's
    free before it pushes the next, so the same work takes longer."""
    two, _, _ = tpipe(C2V_UP_DOWN, tiles=8)
    one, _, _ = tpipe(C2V_ONE_SLOT, tiles=8)
    assert one.time_ns > two.time_ns, (one.time_ns, two.time_ns)


def test_a_producer_that_does_not_wait_for_free_slots_overwrites_them(tpipe):
    """Negative control of the handshake: the same kernel without the producer's
    waits gives wrong tiles (later tiles land in slots not yet read)."""
    _, y, products = tpipe(C2V_NO_ALLOCATE, tiles=8)
    assert not torch.allclose(y, products + 1, rtol=1e-5, atol=1e-4)


def test_a_pop_nobody_pushes_is_a_deadlock_naming_the_waiting_cores(tpipe):
    with pytest.raises(pfsim.RunError, match=r"deadlock: every running kernel waits for a cross-core flag.*"
                                             r"on die\.aiv\d+ \(.*kernel_tpipe\.cpp\) in wait_flag_dev\(0\)"):
        tpipe(POP_ONE_MORE, tiles=2)


def test_only_both_vector_cores_setting_reach_the_cube(tpipe):
    with pytest.raises(pfsim.RunError, match=r"deadlock.*on die\.aic\d+ .* in wait_flag_dev\(9\)"):
        tpipe(ONE_VECTOR_SETS, tiles=1)


def test_a_deadlock_is_found_when_the_last_kernel_blocks_not_at_the_time_limit():
    """The vector cores wait at once for a flag nobody sets; the cube first computes its tiles, then
    waits too. The deadlock arises when the cube blocks, and a blocked core tells the scheduler so:
    the run ends then, no later than its twin without the waits, which does the same work, and at most
    2 us before it (the twin's completion latency and its last counter sample, every 1 us); not when
    the vector cores block, nor at orch.time_limit (1 ms here, 45 s in the preset) with the time
    limit's message."""
    with tpipe_worker(**{"orch.time_limit": "1 ms"}) as run:
        run(WORK_ONLY, tiles=256)  # L2 as warm for the twin as for the deadlock after it
        before, _, _ = run(WORK_ONLY, tiles=256)
        twin, _, _ = run(WORK_ONLY, tiles=256)
        with pytest.raises(pfsim.RunError, match=r"^deadlock: every running kernel waits") as deadlock:
            run(WORK_THEN_WAIT, tiles=256)
    message = str(deadlock.value)
    assert re.search(r"on die\.aic\d+ \(.*\) in wait_flag_dev\(9\)", message), message
    assert len(re.findall(r"on die\.aiv\d+ \(.*?\) in wait_flag_dev\(0\)", message)) == 2, message
    work_ns = twin.sim_time_ns - before.sim_time_ns
    found_ns = deadlock.value.result.sim_time_ns - twin.sim_time_ns
    assert work_ns > 5000, work_ns  # long enough that finding it when the vector cores block would show
    assert work_ns - 2000 <= found_ns <= work_ns, (found_ns, work_ns)


def test_the_time_limit_names_each_core_in_a_flag_wait_and_those_still_running():
    """The vector cores wait at once for a flag nobody sets while the cube computes past
    orch.time_limit: not a deadlock (the cube runs), so the time limit stops the run, and its
    message names each vector core in its wait_flag_dev, with its task and kernel, and the cube
    still running. The same work without the waits (WORK_ONLY) is the control: only the cube is
    named, still running."""
    kernel = r"\(.*?kernel_tpipe\.cpp\)"
    with tpipe_worker(**{"orch.time_limit": "2 us"}) as run:
        with pytest.raises(pfsim.RunError, match=r"^the graph did not finish within orch\.time_limit") as waiting:
            run(WORK_THEN_WAIT, tiles=256)
        with pytest.raises(pfsim.RunError, match=r"^the graph did not finish within orch\.time_limit") as working:
            run(WORK_ONLY, tiles=256)
    message = str(waiting.value)
    waits = re.findall(r"; ([^;]+?) block 0 on die\.aiv\d+ " + kernel + r" in wait_flag_dev\(0\)", message)
    assert len(waits) == 2, message
    assert re.search(r"; still running: [^;]+? block 0 on die\.aic\d+ " + kernel + "$", message), message
    assert "still pending: 1 tasks: " + waits[0] + ";" in message, message
    control = str(working.value)
    assert "wait_flag_dev" not in control, control
    assert re.search(r"; still running: [^;]+? block 0 on die\.aic\d+ " + kernel + "$", control), control


@pytest.mark.parametrize("scenario, message", [
    (CUBE_POPS, "TPOP: a C2V pipe's consumer is the vector core, not the cube core"),
    (SLOT_TOO_SMALL, r"TPUSH: the tile \(32 x 32, 4-byte elements, this core's part\) does not fit the pipe's 2048-byte slot"),
    (NEVER_POPPED, r"cross-core flag 0 of AIV \d+ \(cluster \d+, sub 0\) overflows: 15 sets not yet waited"),
])
def test_a_broken_protocol_is_an_error_naming_the_instruction_and_the_core(tpipe, scenario, message):
    with pytest.raises(pfsim.RunError, match=r"on die\.ai[cv]\d+ \(.*kernel_tpipe\.cpp\): kernel_tpipe\.cpp:\d+: .*" + message):
        tpipe(scenario, tiles=16)


def test_a_set_nobody_waits_for_is_reported(tpipe):
    result, _, _ = tpipe(SET_NOT_WAITED, tiles=1)
    assert any("cross-core flag 9 of AIC" in w and "set 1 time(s) more than it was waited" in w
               for w in result.warnings), result.warnings
    clean, _, _ = tpipe(C2V_UP_DOWN, tiles=3)
    assert not [w for w in clean.warnings if "cross-core" in w], clean.warnings


@pytest.mark.parametrize("per_core", [True, False], ids=["block_local", "plain-static"])
def test_block_local_statics_are_one_per_core(tmp_path, per_core):
    """[[block_local]] gives each core its own copy (generated kernels keep the
    lane id there); the same kernel with a plain static shows what sharing does."""
    text = open(os.path.join(HERE, "kernels/mix/kernel_block_local.cpp")).read()
    if not per_core:
        text = text.replace("[[block_local]] ", "")
    source = tmp_path / "kernel_block_local.cpp"
    source.write_text(text)
    with pfsim.Worker() as worker:
        handle = worker.register(pfsim.Callable(
            orchestration=os.path.join(HERE, "kernels/orchestration/tpipe_orch.cpp"),
            incores=[{"func_id": 0, "source": str(source), "core_type": "aic"},
                     {"func_id": 1, "source": str(source), "core_type": "aiv"}]))
        y = torch.full((16,), -1.0)
        worker.run(handle, [torch.zeros(1), torch.zeros(1), y, torch.zeros(1, dtype=torch.uint8), 0, 0])
    if per_core:
        assert y[:2].tolist() == [0.0, 1.0]
    else:
        assert y[0] == y[1], y  # one core's value overwrote the other's


@pytest.mark.parametrize("register", ["lane", "zero"])
def test_the_subblock_register_reads_the_lane_or_the_board_s_zero(tmp_path, register):
    """core.subblock_register: the no-argument get_subblockid() reads 0 on both vector cores (the board
    under simpler's runtime, the preset) or the vector core's lane (a2a3sim's identity); get_sub_block_id(args)
    is the lane either way. The two settings are each other's negative control."""
    text = open(os.path.join(HERE, "kernels/mix/kernel_block_local.cpp")).read()
    for line in ("[[block_local]] static int32_t lane;\n", "#define get_subblockid() lane\n",
                 "    lane = get_sub_block_id(args);\n"):
        assert line in text
        text = text.replace(line, "")
    source = tmp_path / "kernel_subblock.cpp"
    source.write_text(text)
    with pfsim.Worker(set={"core.subblock_register": register}) as worker:
        handle = worker.register(pfsim.Callable(
            orchestration=os.path.join(HERE, "kernels/orchestration/tpipe_orch.cpp"),
            incores=[{"func_id": 0, "source": str(source), "core_type": "aic"},
                     {"func_id": 1, "source": str(source), "core_type": "aiv"}]))
        y = torch.full((16,), -1.0)
        worker.run(handle, [torch.zeros(1), torch.zeros(1), y, torch.zeros(1, dtype=torch.uint8), 0, 0])
    assert y[:2].tolist() == ([0.0, 1.0] if register == "lane" else [0.0, 0.0])
