"""Scene test of the routed_warm case: a router task picks two of the experts,
the orchestrator reads its choice back (get_tensor_data on a tensor it
allocated with alloc_tensors) and warms those experts' weight views while a
cube task runs; the runner-up's row-sum is predicated on its gate. top2: both
experts run; top1 (threshold 1000, above every score): the gate is off, the
runner-up's row-sum retires without a core and its row of Y keeps its zeros.
Its callable, arguments and golden (golden.cpp) are case.toml's
(pfsim.testing.CaseFileTest)."""

from pfsim.testing import CaseFileTest, scene_test


@scene_test(level=2, runtime="tensormap_and_ringbuffer")
class TestRoutedWarm(CaseFileTest):
    CASE_FILES = [
        {"name": "top2", "file": "case.toml"},
        {"name": "top1", "file": "case.toml", "args": {"threshold": 1000}},
    ]
