"""The core's scalar data cache (core.dcache, model/core/scalar_data_cache.h)
under a pointer-chasing kernel (kernels/aiv/kernel_pointer_chase.cpp): a pass
over lines it holds costs each load the hit latency and no L2 access; exactly
core.dcache_bytes / core.dcache_line_bytes lines fit and one more misses;
lines of one set conflict past core.dcache_ways; dcci of a line or of the whole
cache makes the next loads miss; and with core.dcache = false every load is an
L2 access, as before the cache. Each pass's time is the difference of a run of
three passes and one of two."""

import os
from collections import namedtuple

import pytest
import torch

import pfsim

HERE = os.path.dirname(os.path.abspath(__file__))
CLOCK_HZ = 1.85e9
LINE_ELEMENTS = 8        # int64 elements of a 64 B data-cache line
SETS = 16 * 1024 // 64 // 4
PLAIN, DCCI_LINE, DCCI_ALL = 0, 1, 2
Pass = namedtuple("Pass", "scalar_ns hits misses l2_reads")


def cycles_ns(n):
    """n cycles in ns, as the configuration rounds them: to whole ps."""
    return round(n / CLOCK_HZ * 1e12) / 1e3


SCALAR_OP = cycles_ns(2)     # core.scalar_op
L2_HIT = cycles_ns(50)       # l2.hit_latency


@pytest.fixture(scope="module")
def chase():
    callable_ = pfsim.Callable.from_dict({
        "orchestration": {"source": "kernels/orchestration/scalar_reads_orch.cpp"},
        "incores": [{"func_id": 0, "source": "kernels/aiv/kernel_pointer_chase.cpp", "core_type": "aiv"}],
    }, HERE)
    def one_pass(lines, mode=PLAIN, **settings):
        """What one pass over a chain through `lines` (each a line's index)
        adds under `settings`: the scalar unit's busy ns, the data cache's hits
        and misses, the L2's read lines (a run of three passes less one of two)."""
        chain = torch.zeros((max(lines) + 1) * LINE_ELEMENTS, dtype=torch.int64)
        for i, line in enumerate(lines):
            chain[line * LINE_ELEMENTS] = lines[(i + 1) % len(lines)] * LINE_ELEMENTS
        counts = []
        for passes in (2, 3):
            out = torch.zeros(8, dtype=torch.int64)
            with pfsim.Worker(set=settings) as worker:  # a fresh die: its caches empty
                r = worker.run(worker.register(callable_), [chain, out, 1, len(lines), passes, mode])
            assert r.error is None, r.error
            assert out[1] == passes * len(lines)  # the walk made every load
            assert out[0] == lines[(passes * len(lines)) % len(lines)] * LINE_ELEMENTS  # and read the chain's values
            cores = r.summary["cores"]
            counts.append((cores["scalar"] / 1e3, cores["dcache_hits"], cores["dcache_misses"],
                           r.counters["l2"]["read_lines"]))
        return Pass(*(b - a for a, b in zip(*counts)))

    return one_pass


def hit_ns(hit_cycles=3):
    return cycles_ns(hit_cycles) + SCALAR_OP


def test_a_pass_over_lines_the_cache_holds_costs_the_hit_latency(chase):
    lines = list(range(256))  # exactly 16 KiB of 64 B lines
    p = chase(lines)
    assert (p.hits, p.misses, p.l2_reads) == (256, 0, 0)
    assert p.scalar_ns == pytest.approx(256 * hit_ns(), abs=1e-3)
    # Negative control: the hit latency is what the pass costs.
    slower = chase(lines, **{"core.dcache_hit_latency": "6 cycles"})
    assert slower.scalar_ns == pytest.approx(256 * hit_ns(6), abs=1e-3)


def test_one_line_more_than_fits_evicts_the_least_recent_line(chase):
    # 257 lines walked in a cycle: set 0 holds 5 of them (0, 64, ... 256) in 4
    # ways, so each of those 5 misses every pass (LRU's cyclic worst case).
    p = chase(list(range(257)))
    assert (p.hits, p.misses, p.l2_reads) == (252, 5, 5)
    assert p.scalar_ns >= 252 * hit_ns() + 5 * (L2_HIT + SCALAR_OP)


def test_lines_of_one_set_conflict_past_its_ways(chase):
    same_set = [i * SETS for i in range(5)]  # 4 KiB apart: one set
    assert chase(same_set[:4])[1:] == (4, 0, 0)
    assert chase(same_set)[1:] == (0, 5, 5)  # every load misses
    # Negative control: 8 ways hold all five.
    assert chase(same_set, **{"core.dcache_ways": 8})[1:] == (5, 0, 0)


def test_dcci_makes_the_next_loads_miss(chase):
    lines = list(range(64))
    assert chase(lines)[1:] == (64, 0, 0)
    for mode in (DCCI_LINE, DCCI_ALL):
        assert chase(lines, mode)[1:] == (0, 64, 64)
    # A dcci of each line after its load leaves the cache nothing to hit: the
    # loads cost what they cost without a cache, but for reading the whole 64 B
    # line from the L2 rather than the load's 8 B.
    on, off = chase(lines, DCCI_LINE), chase(lines, DCCI_LINE, **{"core.dcache": "false"})
    assert (off.hits, off.misses, off.l2_reads) == (0, 0, 64)
    assert off.scalar_ns < on.scalar_ns < off.scalar_ns * 1.01


def test_without_the_cache_every_load_is_an_l2_access(chase):
    lines = list(range(256))
    off = chase(lines, **{"core.dcache": "false"})
    assert (off.hits, off.misses, off.l2_reads) == (0, 0, 256)
    assert off.scalar_ns >= 256 * (L2_HIT + SCALAR_OP)
    assert chase(lines).scalar_ns < off.scalar_ns / 5
