"""The pfsim pytest plugin: `pytest -p pfsim.plugin` (what `pfsim test` runs),
or, installed with pip, the `pytest11` entry point with `--platform pfsim`.

The plugin is a gate. It turns pfsim's harness on (pfsim._harness: simpler's
options, fixtures and markers, and simpler's import names resolved to pfsim,
pfsim._simpler) when `-p pfsim.plugin` is given or `--platform pfsim` is on the
command line; otherwise it does nothing, so a pytest run of simpler's own tests
on its own platforms is left to simpler's harness in the same environment.
"""

from __future__ import annotations

import pytest


def wanted(args: list[str], plugins: list[str]) -> bool:
    """Whether this pytest run is pfsim's: `-p pfsim.plugin` or `--platform pfsim`."""
    if "pfsim.plugin" in plugins:
        return True
    for i, a in enumerate(args):
        if a == "--platform" and i + 1 < len(args) and args[i + 1] == "pfsim":
            return True
        if a == "--platform=pfsim":
            return True
    return False


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    # Before any conftest.py is loaded: the harness's options exist, and
    # simpler's own harness conftests are not loaded, when the run is pfsim's.
    if not wanted(list(args), list(getattr(early_config.known_args_namespace, "plugins", None) or [])):
        return
    from . import _harness, _simpler

    try:
        _simpler.install()
    except ImportError as e:
        raise pytest.UsageError(f"pfsim: {e}") from None
    early_config.pluginmanager.register(_harness, "pfsim.harness")
