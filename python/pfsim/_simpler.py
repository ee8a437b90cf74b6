"""simpler's import names on pfsim, so a scene test runs with no edit.

install() puts a finder first on sys.meta_path that:

- answers `simpler_setup`, `simpler_setup.scene_test`, `simpler`,
  `simpler.task_interface` and `simpler.worker` with pfsim's harness
  (pfsim.testing, pfsim.task_interface, pfsim.simpler_worker);
- refuses by name the modules of simpler's own runtime pfsim has no
  counterpart of (REFUSED: its native binding, its buffer identities);
- leaves every other `simpler_setup.*` / `simpler.*` module (simpler's goldens,
  its tools) to a simpler installation on sys.path, unchanged: the alias packages'
  `__path__` is that installation's folder. Without one, importing such a module
  raises ModuleNotFoundError saying which module, why, and what to install;
- does not load simpler's own harness, the conftest.py files inside a simpler
  checkout (their fixtures and options are simpler's runtime's; pfsim's plugin
  replaces them): such a conftest.py is loaded as an empty module, and
  skipped_conftests() lists them.

pfsim ships none of simpler's code: what it lacks comes from the user's simpler.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys

# module -> pfsim module providing its names
PROVIDED = {
    "simpler_setup": "pfsim.testing",
    "simpler_setup.scene_test": "pfsim.testing",
    "simpler": None,
    "simpler.task_interface": "pfsim.task_interface",
    "simpler.worker": "pfsim.simpler_worker",
}
# simpler's modules pfsim refuses by name (not provided, and not loaded from a
# simpler installation either: they are simpler's own runtime) -> why
REFUSED = {
    "_task_interface": "simpler's native binding (its buffer identities, mailboxes and chip worker); pfsim "
                       "provides simpler.task_interface in Python and has none of that native state",
    "simpler.buffer": "simpler's host-buffer identity and backend kinds (POSIX shm, its canonical identities); "
                      "pfsim's create_buffer is a file the dies map (pfsim.level3.HostBuffer)",
    "simpler.callable_identity": "simpler's callable identities across a network of nodes (level 4), not modelled",
}
_ROOTS = ("simpler_setup", "simpler")


def simpler_checkout(path: str) -> str | None:
    """The simpler checkout folder containing `path`, if any (a folder holding
    simpler_setup/scene_test.py and python/simpler/task_interface.py)."""
    d = os.path.dirname(os.path.abspath(path))
    while True:
        if (os.path.isfile(os.path.join(d, "simpler_setup", "scene_test.py"))
                and os.path.isfile(os.path.join(d, "python", "simpler", "task_interface.py"))):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def real_locations(root: str) -> list[str]:
    """The folders of a simpler installation's package `root` on sys.path ([] if none)."""
    spec = importlib.machinery.PathFinder.find_spec(root)
    return list(spec.submodule_search_locations or []) if spec and spec.submodule_search_locations else []


class _Alias(importlib.abc.Loader):
    """Makes a pfsim-provided simpler module: pfsim's names, and the real package's path."""

    def __init__(self, source: str | None, path: list[str] | None):
        self.source, self.path = source, path

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        if self.path is not None:
            module.__path__ = self.path
            # The provided submodules first, as a package's __init__ imports them: importing
            # `simpler_setup.scene_test` later would otherwise rebind the package's
            # `scene_test` (the decorator) to the submodule.
            for child in PROVIDED:
                if child.startswith(module.__name__ + "."):
                    importlib.import_module(child)
        if self.source:
            src = importlib.import_module(self.source)
            module.__dict__.update({k: v for k, v in vars(src).items() if not k.startswith("__")})
            module.__all__ = list(getattr(src, "__all__", []))
            module.__getattr__ = _lacking(module.__name__)
        module.__doc__ = f"pfsim's {module.__name__} (from {self.source or 'pfsim'}): see pfsim's docs/python.md"


def _lacking(module_name: str):
    """A provided module's __getattr__ (PEP 562): a name of simpler's module that
    pfsim does not provide is an ImportError saying so, not Python's bare "cannot
    import name" (an ImportError, not an AttributeError: `from M import NAME`
    would replace the latter with its own message). Dunder names stay AttributeErrors."""

    def __getattr__(name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(f"module '{module_name}' has no attribute '{name}'")
        kind = "a private helper of simpler's own harness" if name.startswith("_") else "a name of simpler's"
        raise ImportError(
            f"cannot import name '{name}' from '{module_name}': it is {kind} that pfsim's harness does not "
            f"provide (pfsim provides simpler's scene-test interface, listed in its docs/python.md)",
            name=module_name)

    return __getattr__


class _Empty(importlib.abc.Loader):
    """A simpler harness conftest.py, not run."""

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        module.__doc__ = "simpler's own harness conftest, not loaded under pfsim"


class SimplerFinder(importlib.abc.MetaPathFinder):
    def __init__(self):
        self.skipped: list[str] = []

    def find_spec(self, fullname, path=None, target=None):
        if fullname in REFUSED:
            raise ModuleNotFoundError(f"No module named '{fullname}' on pfsim: it is {REFUSED[fullname]}",
                                      name=fullname)
        if fullname in PROVIDED:
            root = fullname.split(".")[0]
            is_package = fullname in _ROOTS
            spec = importlib.machinery.ModuleSpec(
                fullname, _Alias(PROVIDED[fullname], real_locations(root) if is_package else None),
                is_package=is_package)
            return spec
        root = fullname.split(".")[0]
        if root in _ROOTS:
            if real_locations(root):
                return None  # simpler's own module, found through the alias package's __path__
            raise ModuleNotFoundError(
                f"No module named '{fullname}': pfsim provides simpler's scene-test harness ("
                f"{', '.join(sorted(k for k in PROVIDED if PROVIDED[k]))}) but not the rest of simpler; "
                f"'{fullname}' is simpler's own code, and no '{root}' package of a simpler installation is on "
                "sys.path. Install simpler in this environment (pip install its checkout) and pfsim loads it from "
                "there unchanged.", name=fullname)
        if fullname == "conftest" or fullname.endswith(".conftest"):
            for d in (path or sys.path):
                candidate = os.path.join(d or ".", "conftest.py")
                if not os.path.isfile(candidate):
                    continue
                if not simpler_checkout(candidate):
                    return None  # the first conftest.py the import finds: not simpler's
                origin = os.path.abspath(candidate)
                if origin not in self.skipped:
                    self.skipped.append(origin)
                spec = importlib.util.spec_from_loader(fullname, _Empty(), origin=origin)
                spec.has_location = True
                return spec
        return None


_finder: SimplerFinder | None = None


def install() -> SimplerFinder:
    """Puts the finder first on sys.meta_path (once). A simpler module already
    imported from elsewhere is an error: it would not be pfsim's."""
    global _finder
    if _finder is None:
        early = sorted(n for n in PROVIDED if n in sys.modules)
        if early:
            raise ImportError(f"{early[0]} was imported before pfsim's harness was installed "
                              f"(from {getattr(sys.modules[early[0]], '__file__', None)}): pfsim cannot replace it")
        _finder = SimplerFinder()
        sys.meta_path.insert(0, _finder)
    return _finder


def skipped_conftests() -> list[str]:
    return list(_finder.skipped) if _finder else []


# The conftest.py files of simpler's own harness at the commit pfsim pins, from
# the checkout's root. Any other conftest.py inside a checkout is replaced too
# (a copy of one of these is simpler's harness as well), but named at the end of
# the session, where -q shows it: a user's own file is not dropped unsaid.
SHIPPED_CONFTESTS = frozenset([
    "conftest.py", "tests/conftest.py", "tests/st/conftest.py", "tests/ut/py/conftest.py",
    "tests/st/a2a3/host_build_graph/concurrent_prepare_stress/conftest.py",
    "tests/st/a2a3/host_build_graph/native_run_lifecycle/conftest.py",
    "tests/st/a2a3/host_build_graph/prepared_callable/conftest.py",
    "tests/st/a2a3/tensormap_and_ringbuffer/prepared_callable/conftest.py",
    "tests/st/a5/host_build_graph/prepared_callable/conftest.py",
    "tests/st/a5/tensormap_and_ringbuffer/prepared_callable/conftest.py",
])


def skipped_unshipped_conftests() -> list[str]:
    """The replaced conftest.py files that simpler does not ship at the pinned commit."""
    return [p for p in skipped_conftests()
            if os.path.relpath(p, simpler_checkout(p)).replace(os.sep, "/") not in SHIPPED_CONFTESTS]


def uninstall() -> None:
    """Removes the finder and pfsim's simpler modules (tests of this module)."""
    global _finder
    if _finder is not None:
        sys.meta_path.remove(_finder)
        _finder = None
    for name in list(sys.modules):
        if name.split(".")[0] in _ROOTS:
            del sys.modules[name]


__all__ = ["install", "uninstall", "skipped_conftests", "skipped_unshipped_conftests", "SHIPPED_CONFTESTS", "simpler_checkout", "PROVIDED", "REFUSED"]
