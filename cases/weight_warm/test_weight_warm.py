"""Scene test of the weight_warm cases: a cube matmul runs while a vector task
prefetches the weights of the next, bandwidth-bound task (a row-sum over W).
Fire-and-forget warm; the warm waits; deferred completion (the row-sum starts
when the engine is done); W larger than the L2. Each case is a case file of
this folder: its callable, arguments and golden (pfsim.testing.CaseFileTest)."""

from pfsim.testing import CaseFileTest, scene_test


@scene_test(level=2, runtime="tensormap_and_ringbuffer")
class TestWeightWarm(CaseFileTest):
    CASE_FILES = [
        {"name": "fire_and_forget", "file": "case.toml"},
        {"name": "waited", "file": "case_waited.toml"},
        {"name": "deferred", "file": "case_deferred.toml"},
        {"name": "oversize", "file": "case_oversize.toml"},
    ]
