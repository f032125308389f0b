"""A lazily re-exported name that is also its package's module name (``metrics.accuracy``,
``economics.sensitivity``, ``interruption.recovery``, ``pipeline.resume``) still names the
function after the module was imported first, as the eager re-export did."""

from __future__ import annotations

import subprocess
import sys

import pytest

CASES = [("acceval.metrics", "accuracy", "acceval.metrics.accuracy"),
         ("acceval.metrics", "derive", "acceval.metrics.derive"),
         ("acceval.economics", "sensitivity", "acceval.economics.sensitivity"),
         ("acceval.interruption", "recovery", "acceval.interruption.recovery"),
         ("acceval.pipeline", "resume", "acceval.pipeline.resume")]


@pytest.mark.parametrize(("package", "name", "first"), CASES)
def test_a_shadowing_module_imported_first_leaves_the_function(package: str, name: str,
                                                              first: str) -> None:
    code = (f"import {first}\nfrom {package} import {name}\n"
            f"import types\nassert not isinstance({name}, types.ModuleType), {name}\n"
            f"assert callable({name})\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr
