"""simpler's `simpler.worker.Worker` on pfsim (under pfsim's harness,
`from simpler.worker import Worker` resolves here): level 2 is one simulated
die (pfsim.Worker), level 3 several dies of one simulation
(pfsim.level3.L3Worker). Constructed, then `init()`, as simpler's is; the
rest of simpler's worker module (its mailboxes, its process tree) is simpler's
own and not provided: importing such a name is an ImportError saying so.
"""

from __future__ import annotations

import sys

from . import Worker as _DieWorker
from .level3 import L3Worker
from .task_interface import CallConfig, ring_values

__all__ = ["Worker"]

_warned = set()


def _warn_once(key: str, message: str) -> None:
    if key not in _warned:
        _warned.add(key)
        print(f"pfsim: warning: {message}", file=sys.stderr)


class Worker:
    """simpler's Worker: level=2 (device_id) or level=3 (device_ids, num_sub_workers).
    platform is a2a3 or a2a3sim (pfsim simulates a2a3 for both), runtime
    tensormap_and_ringbuffer; any other value is refused by name."""

    def __init__(self, level: int, device_id: int = 0, device_ids=None, num_sub_workers: int = 0,
                 platform: str = "a2a3sim", runtime: str = "tensormap_and_ringbuffer", enable_sdma: bool = False,
                 **options):
        if options:
            raise TypeError(f"Worker: option '{sorted(options)[0]}' of simpler's Worker is not modelled on pfsim")
        if int(level) not in (2, 3):
            raise ValueError(f"Worker(level={level}): pfsim runs level 2 (one die) and level 3 (several dies of one "
                             "node); a network of nodes is not modelled")
        if platform not in ("a2a3", "a2a3sim"):
            raise ValueError(f"Worker(platform={platform!r}): pfsim simulates a2a3 (a2a3 or a2a3sim)")
        if runtime != "tensormap_and_ringbuffer":
            raise ValueError(f"Worker(runtime={runtime!r}): pfsim runs the tensormap_and_ringbuffer runtime")
        if int(level) == 2 and num_sub_workers:
            raise ValueError("Worker(level=2, num_sub_workers=...): sub-workers are level 3")
        self.level = int(level)
        self.device_ids = list(device_ids) if device_ids is not None else [int(device_id)]
        self.num_sub_workers = int(num_sub_workers)
        self.platform, self.runtime, self.enable_sdma = platform, runtime, bool(enable_sdma)
        self._impl = None

    def init(self, prewarm_config: CallConfig | None = None) -> None:
        """Starts the die(s). prewarm_config (simpler sizes its runtime arena ahead of the
        first run with it) is checked as a run's configuration is; pfsim sizes a run's
        rings when the run starts, so there is nothing to warm (warned once)."""
        if prewarm_config is not None:
            refused = prewarm_config.refused()
            if refused:
                raise ValueError(f"Worker.init(prewarm_config): {refused[0]}")
            env = prewarm_config.runtime_env
            for field in env.FIELDS:
                ring_values(field, getattr(env, field))
            _warn_once("prewarm", "Worker.init(prewarm_config): checked; pfsim sizes each run's rings when it runs, "
                                  "so no runtime arena is warmed ahead (not modelled)")
        if self._impl is not None:
            raise RuntimeError("Worker.init: already initialised")
        if self.level == 2:
            self._impl = _DieWorker(enable_sdma=self.enable_sdma)
        else:
            self._impl = L3Worker(device_count=len(self.device_ids), num_sub_workers=self.num_sub_workers,
                                  enable_sdma=self.enable_sdma)

    def close(self) -> None:
        if self._impl is not None:
            self._impl.close()
            self._impl = None

    def __getattr__(self, name: str):
        impl = self.__dict__.get("_impl")
        if impl is None:
            raise RuntimeError(f"Worker.{name}: call init() first")
        return getattr(impl, name)
