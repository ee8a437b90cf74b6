"""`pip install .`: the package, its pytest plugin (an entry point) and the
pfsim binary in a fresh virtual environment, with no PYTHONPATH.

Offline and quick: the venv sees the system's numpy, pytest and torch
(--system-site-packages), and the build uses the system's setuptools and wheel
(--no-index --no-build-isolation)."""

import os
import shutil
import subprocess
import sys

import pfsim

from test_simpler_compat import CHAIN, scene

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def checkout_copy(dest):
    """What `pip install .` reads of a checkout: the build files and python/pfsim."""
    os.makedirs(dest)
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(os.path.join(ROOT, name), dest / name)
    shutil.copytree(os.path.join(ROOT, "python", "pfsim"), dest / "python" / "pfsim",
                    ignore=shutil.ignore_patterns("__pycache__", "_binary.py"))
    return dest


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PFSIM_BINARY", "PFSIM_PYTHON")}
    env.update(extra)
    return env


def venv_with_pfsim(tmp_path, binary):
    src = checkout_copy(tmp_path / "src")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)], check=True)
    r = subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q",
                        "--no-index", "--no-build-isolation", str(src)],
                       capture_output=True, text=True, env=clean_env(PFSIM_BINARY=binary), timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return venv


def test_pip_install_puts_the_package_the_plugin_and_the_binary_into_a_fresh_venv(tmp_path):
    venv = venv_with_pfsim(tmp_path, pfsim.find_binary())
    path = scene(tmp_path / "work", CHAIN)
    run = [str(venv / "bin" / "python"), "-m", "pytest", "-p", "no:cacheprovider", "-q", str(path)]
    env = clean_env(PFSIM_CACHE_DIR=os.environ.get("PFSIM_CACHE_DIR", str(tmp_path / "cache")))
    r = subprocess.run(run + ["--platform", "pfsim"], capture_output=True, text=True, env=env, cwd=tmp_path / "work",
                       timeout=600)
    assert r.returncode == 0 and "1 passed" in r.stdout, r.stdout + r.stderr
    assert "pfsim: prefetch off -> on" in r.stdout, r.stdout
    # negative control: without --platform pfsim the installed plugin stays out of the way
    r = subprocess.run(run, capture_output=True, text=True, env=env, cwd=tmp_path / "work", timeout=600)
    assert r.returncode == 2 and "No module named 'simpler'" in r.stdout, r.stdout + r.stderr
    # the binary is the environment's `pfsim` command
    r = subprocess.run([str(venv / "bin" / "pfsim"), "help"], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0 and "pfsim" in r.stdout, r.stdout + r.stderr
    # negative control: an installation without a binary says how to give it one
    os.remove(venv / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages" / "pfsim" / "bin" /
              "pfsim")
    env = clean_env(PATH="/usr/bin:/bin")
    r = subprocess.run([str(venv / "bin" / "pfsim"), "help"], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 1 and "this installation has no pfsim binary" in r.stderr, r.stdout + r.stderr
    r = subprocess.run([str(venv / "bin" / "python"), "-c", "import pfsim; pfsim.Worker()"], capture_output=True,
                       text=True, env=env, timeout=60)
    assert r.returncode == 1 and "cannot find the pfsim binary: set PFSIM_BINARY" in r.stderr, r.stdout + r.stderr
