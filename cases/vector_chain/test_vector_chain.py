"""Scene test of the vector_chain case: out = 2 * (a + b) + a through three
dependent 4-block AIV tasks with runtime-allocated intermediates. Its callable,
arguments and golden are case.toml's (pfsim.testing.CaseFileTest)."""

from pfsim.testing import CaseFileTest, scene_test


@scene_test(level=2, runtime="tensormap_and_ringbuffer")
class TestVectorChain(CaseFileTest):
    CASE_FILES = [{"name": "blocks4", "file": "case.toml"}]
