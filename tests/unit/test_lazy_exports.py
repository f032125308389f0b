"""Packages whose names load on first use: each exported name is the object its module
defines, an unknown name is an AttributeError, and reading a package's spec loads none of
its other parts."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

LAZY = ["acceval.serve", "acceval.targets", "acceval.probes", "acceval.tasks",
        "acceval.interruption"]


@pytest.mark.parametrize("package", LAZY)
def test_every_exported_name_is_its_modules_object(package: str) -> None:
    pkg = importlib.import_module(package)
    for name in pkg.__all__:
        value = getattr(pkg, name)
        home = getattr(value, "__module__", None)
        if isinstance(home, str) and home.startswith(package + "."):
            assert getattr(importlib.import_module(home), name) is value
        assert name in vars(pkg)  # kept: the next read is a plain attribute
    with pytest.raises(AttributeError, match=f"module '{package}' has no attribute 'nope'"):
        pkg.nope  # noqa: B018


def test_a_from_import_of_a_lazy_name_works() -> None:
    from acceval.serve import parse_options, start_server
    from acceval.tasks import ExactChecker

    assert callable(start_server) and parse_options(["a=1"]) == {"a": 1}
    assert ExactChecker.__name__ == "ExactChecker"


def test_reading_the_specs_loads_no_part_behind_them() -> None:
    code = ("import sys; import acceval.serve.spec, acceval.targets.spec, acceval.probes.spec, "
            "acceval.tasks.spec, acceval.interruption.spec; "
            "print(' '.join(sorted(m for m in sys.modules if m.startswith(('acceval', 'psutil', "
            "'aiohttp')))))")
    loaded = set(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                check=True).stdout.split())
    behind = {"acceval.serve._server", "acceval.serve._process", "acceval.targets.openai",
              "acceval.targets.factories", "acceval.probes.cpu", "acceval.probes.factories",
              "acceval.tasks._checkers", "acceval.tasks._load", "acceval.interruption.inject",
              "psutil"}
    assert sorted(loaded & behind) == []
    assert {"acceval.serve.spec", "acceval.tasks.spec"} <= loaded
