"""Scene test of the prefetch_demo case: one AIV task prefetches its input into
L2, waits, and copies it to the output. The prefetch changes no value. Its
callable, arguments and golden are case.toml's (pfsim.testing.CaseFileTest)."""

from pfsim.testing import CaseFileTest, scene_test


@scene_test(level=2, runtime="tensormap_and_ringbuffer")
class TestPrefetchDemo(CaseFileTest):
    CASE_FILES = [{"name": "copy", "file": "case.toml"}]
