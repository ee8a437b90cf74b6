"""Benchmark (#49): the pytest process's CPU for one 125 MiB output of a run, the transfer-file
path (a clone, written into a file in /dev/shm, read back, the file emptied) against the
output's own memory file (_tensors.shared_copy, which the device maps shared: nothing read
back), each the best of 3 in CPU seconds, for random and for all-zero initial values.
usage: PYTHONPATH=$(pfsim python-path) python3 bench/output_copies.py"""
import os
import tempfile
import time

import torch

from pfsim import _tensors

PAGE = _tensors.PAGE


def cpu_seconds(step, times=3):
    best = []
    for _ in range(times):
        start = time.process_time()
        step()
        best.append(time.process_time() - start)
    return min(best)


def main():
    folder = "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()
    path = os.path.join(folder, f"output_copies.{os.getpid()}.bin")
    for name, value in (("random", torch.randn(2000 * 128 * 128)), ("zeros", torch.zeros(2000 * 128 * 128))):
        def transfer_file():
            out = value.clone()
            with open(path, "wb") as f:
                f.write(_tensors.tensor_buffer(out))
                f.truncate(-(-out.numel() * 4 // PAGE) * PAGE)
            with open(path, "rb") as f:
                _tensors.read_into(out, f)
            os.truncate(path, 0)

        def own_file():
            out = _tensors.shared_copy(value)
            assert _tensors.memory_file(out)
            out.view(-1)[::1024] = 1.0  # a write on every page, as the kernels' results are

        print(f"{name}: transfer file {cpu_seconds(transfer_file):.3f} CPU s, "
              f"own memory file {cpu_seconds(own_file):.3f} CPU s per 125 MiB output")
    os.unlink(path)


if __name__ == "__main__":
    main()
