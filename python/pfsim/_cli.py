"""The `pfsim` command of a pip-installed pfsim: runs the binary packaged with it
(or $PFSIM_BINARY), its `pfsim test` with this environment's Python."""

from __future__ import annotations

import os
import sys

from ._device import packaged_binary


def main() -> None:
    binary = os.environ.get("PFSIM_BINARY") or packaged_binary()
    if not binary:
        sys.exit("pfsim: this installation has no pfsim binary (it was built without one): set PFSIM_BINARY to a "
                 "built pfsim (bazel-bin/cli/pfsim in a checkout), or reinstall after `bazel build //cli:pfsim`")
    os.environ.setdefault("PFSIM_PYTHON", sys.executable)  # `pfsim test` runs this environment's Python
    os.execv(binary, [binary, *sys.argv[1:]])
