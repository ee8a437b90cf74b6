"""pyproject.toml's build, plus the pfsim binary: $PFSIM_BINARY, else this
checkout's bazel-bin/cli/pfsim, is packaged as pfsim/bin/pfsim when it exists
(build it first: `bazel build //cli:pfsim`). Without it the package installs
and says, when used, how to point it at a binary."""

import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


class BuildWithBinary(build_py):
    def run(self):
        super().run()
        binary = os.environ.get("PFSIM_BINARY") or os.path.join(HERE, "bazel-bin", "cli", "pfsim")
        if os.path.isfile(binary) and os.access(binary, os.X_OK):
            target = os.path.join(self.build_lib, "pfsim", "bin", "pfsim")
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copyfile(binary, target)
            os.chmod(target, 0o755)
        else:
            self.warn(f"no pfsim binary at {binary}: the package will need PFSIM_BINARY or pfsim on PATH")


setup(cmdclass={"build_py": BuildWithBinary})
