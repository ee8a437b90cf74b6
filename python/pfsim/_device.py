"""The device process a Worker drives: `pfsim device`, one JSON request and
one JSON reply per line over two pipes of its own (kernels' output keeps
stdout and stderr). The process dies with its client (PR_SET_PDEATHSIG)."""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import time


def packaged_binary() -> str | None:
    """The binary a pip install packaged beside this package (None without one)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "pfsim")
    return path if os.access(path, os.X_OK) else None


def find_binary(binary: str | None = None) -> str:
    """The pfsim executable: `binary`, else $PFSIM_BINARY, else the binary that
    unpacked this package, else the one a pip install packaged with it, else
    `pfsim` on PATH."""
    candidates = [binary, os.environ.get("PFSIM_BINARY")]
    try:
        from . import _binary  # written by `pfsim python-path` / `pfsim test`

        candidates.append(_binary.BINARY)
    except ImportError:
        pass
    candidates += [packaged_binary(), shutil.which("pfsim")]
    for c in candidates:
        if c and os.access(c, os.X_OK):
            return c
    raise FileNotFoundError("cannot find the pfsim binary: set PFSIM_BINARY to a built pfsim (bazel-bin/cli/pfsim "
                            "in a checkout), run through `pfsim test`, or pip install pfsim from a checkout where "
                            "`bazel build //cli:pfsim` has run")


class DeviceDied(RuntimeError):
    """The device process ended while a request was outstanding."""


class Device:
    def __init__(self, args: list[str], binary: str | None = None, timeout: float | None = None):
        self.binary = find_binary(binary)
        req_r, self._req_w = os.pipe()
        self._rep_r, rep_w = os.pipe()
        try:
            self.process = subprocess.Popen(
                [self.binary, "device", "--in-fd", str(req_r), "--out-fd", str(rep_w), *args],
                pass_fds=(req_r, rep_w), stdin=subprocess.DEVNULL)
        finally:
            os.close(req_r)
            os.close(rep_w)
        self._buffer = b""
        self.stopped = False
        self.hello = self.receive(timeout)

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def request(self, message: dict, timeout: float | None = None) -> dict:
        if not self.alive:
            raise DeviceDied("the pfsim device process is not running (the worker was closed or died)")
        data = (json.dumps(message) + "\n").encode()
        try:
            os.write(self._req_w, data)
        except BrokenPipeError:
            self.kill()
            raise DeviceDied(f"the pfsim device process died ({self._exit_text()})") from None
        return self.receive(timeout)

    def receive(self, timeout: float | None = None) -> dict:
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            while b"\n" not in self._buffer:
                wait = None if deadline is None else max(0.0, deadline - time.monotonic())
                ready, _, _ = select.select([self._rep_r], [], [], wait)
                if not ready:
                    self.kill()
                    raise TimeoutError(f"the pfsim device did not answer within {timeout} s; the worker was stopped")
                chunk = os.read(self._rep_r, 1 << 16)
                if not chunk:
                    self.process.wait()
                    raise DeviceDied(f"the pfsim device process died ({self._exit_text()})")
                self._buffer += chunk
        except BaseException:
            # Ctrl-C, a timeout or a death: never leave a device running behind.
            self.kill()
            raise
        line, self._buffer = self._buffer.split(b"\n", 1)
        return json.loads(line)

    def _exit_text(self) -> str:
        rc = self.process.poll() if self.process else None
        if rc is None:
            return "still running"
        return f"killed by signal {-rc}" if rc < 0 else f"exit status {rc}"

    def close(self) -> None:
        if self.alive:
            try:
                os.write(self._req_w, b'{"op": "close"}\n')
                self.process.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.kill()

    def kill(self) -> None:
        self.stopped = True  # by this side: closed, or a timeout
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for fd in ("_req_w", "_rep_r"):
            f = getattr(self, fd, None)
            if f is not None:
                try:
                    os.close(f)
                except OSError:
                    pass
                setattr(self, fd, None)
