"""A scene whose output depends on its cores' timing: the harness's off/on
bit-identity check must fail it (tests/python/test_scene_harness.py)."""

import pytest
import torch

from pfsim.testing import ArgDirection as D
from pfsim.testing import SceneTestCase, TaskArgsBuilder, TensorArg, scene_test


@pytest.mark.sdma
@scene_test(level=2, runtime="tensormap_and_ringbuffer")
class TestRace(SceneTestCase):
    ATOL = 1  # out[1] is 0 or 1 depending on the race: both within tolerance of the golden
    CALLABLE = {
        "orchestration": {"source": "kernels/orchestration/race_orch.cpp", "signature": [D.IN, D.OUT]},
        "incores": [{"func_id": 0, "source": "kernels/aiv/kernel_race.cpp", "core_type": "aiv"}],
    }
    CASES = [{"name": "race", "platforms": ["a2a3"], "params": {}}]

    def generate_args(self, params):
        return TaskArgsBuilder(TensorArg("src", torch.ones(64)), TensorArg("out", torch.zeros(64)))

    def compute_golden(self, args, params):
        args.out[0] = 1.0
