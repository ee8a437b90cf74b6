"""`pfsim test ARGS` for the tests, without starting a Python interpreter and
importing torch for each call (about 2.4 CPU-s each, some 60 calls in
python_test).

One server process, started on first use, imports torch, pytest and pfsim once;
each call forks it, and the child does what `pfsim test` does
(cli/test_command.cc: the package root first on PYTHONPATH, OMP_WAIT_POLICY
passive unless set, `python -m pytest -p pfsim.plugin ARGS` in the caller's
folder) with the caller's environment, its stdout and stderr in files of their
own. Each call is still a process of its own, so nothing of one run (sys.modules,
the harness's session settings, devices) reaches the next.
test_simpler_compat.py::test_a_forked_run_is_a_pfsim_test_run checks that both
give the same output; the whole suite itself runs through `pfsim test`."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import tempfile

# The server: one JSON request a line on stdin, one reply a line on stdout.
SERVER = r"""
import atexit, json, os, sys
sys.path.pop(0)  # `python -c`'s folder: a child puts its own caller's first, as `python -m` does
import pytest, torch  # noqa: F401 (the imports every child would repeat)
import pfsim  # noqa: F401 (not pfsim.plugin: pytest rewrites its asserts as it imports it)
base_path = list(sys.path)
for line in sys.stdin:
    call = json.loads(line)
    pid = os.fork()
    if pid == 0:
        rc = 3
        try:
            os.chdir(call["cwd"])
            os.environ.clear()
            os.environ.update(call["env"])
            extra = [p for p in call["env"].get("PYTHONPATH", "").split(os.pathsep) if p]
            sys.path[:] = [os.getcwd()] + extra + [p for p in base_path if p not in extra]
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            for fd, path in ((1, call["out"]), (2, call["err"])):
                os.dup2(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), fd)
            sys.stdin = open(os.devnull)
            sys.argv = [sys.executable, "-m", "pytest", "-p", "pfsim.plugin", *call["args"]]
            rc = int(pytest.main(["-p", "pfsim.plugin", *call["args"]]))
            atexit._run_exitfuncs()
        except SystemExit as e:
            rc = e.code if isinstance(e.code, int) else 1
        except BaseException:
            import traceback
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(rc)
    _, status = os.waitpid(pid, 0)
    print(json.dumps({"rc": os.waitstatus_to_exitcode(status)}), flush=True)
"""

_server = None


def _start():
    global _server
    if _server is None or _server.poll() is not None:
        # a session of its own: a call that times out is ended with every process it started
        _server = subprocess.Popen([sys.executable, "-c", SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   text=True, env=_test_env(os.environ), start_new_session=True)
    return _server


def _test_env(env):
    """The environment `pfsim test` gives pytest: the package root first on PYTHONPATH, torch's threads passive."""
    import pfsim

    root = os.path.dirname(os.path.dirname(os.path.abspath(pfsim.__file__)))
    env = dict(env)
    paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p != root]
    env["PYTHONPATH"] = os.pathsep.join([root] + paths)
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    return env


def pfsim_test(*args, cwd=None, env=None, timeout=600):
    """`pfsim test ARGS` in folder CWD with environment ENV (os.environ by default), as subprocess.run(...,
    capture_output=True, text=True) gives it. A call taking longer than TIMEOUT seconds is killed, with the
    server, and raises TimeoutError."""
    server = _start()
    with tempfile.TemporaryDirectory(prefix="forked-pytest-") as d:
        out, err = os.path.join(d, "out"), os.path.join(d, "err")
        server.stdin.write(json.dumps({"args": [str(a) for a in args], "cwd": os.path.abspath(cwd or os.getcwd()),
                                       "env": _test_env(os.environ if env is None else env),
                                       "out": out, "err": err}) + "\n")
        server.stdin.flush()
        if not select.select([server.stdout], [], [], timeout)[0]:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
            raise TimeoutError(f"pfsim test {' '.join(map(str, args))}: no end after {timeout} s")
        reply = server.stdout.readline()
        if not reply:
            raise RuntimeError(f"the forked pytest server ended (exit {server.wait()})")
        with open(out) as o, open(err) as e:
            return subprocess.CompletedProcess(["pfsim", "test", *args], json.loads(reply)["rc"], o.read(), e.read())
