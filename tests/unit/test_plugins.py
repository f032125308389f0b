"""One plugin door: every group lists its built-ins, unknown names list what is installed, and
a third-party distribution on sys.path plugs into each group the way an installed one would."""

from __future__ import annotations

import sys
import textwrap
import tomllib
from collections.abc import Iterator
from importlib.metadata import EntryPoints, entry_points
from pathlib import Path

import pytest
from pydantic import ValidationError

from acceval import plugins
from acceval.engines.base import engine_class, engine_names, load_engine
from acceval.errors import StudyError, UsageError
from acceval.plugins import BUILTINS, GROUPS, PluginError, installed, load_plugin
from acceval.probes import CpuTimeProbe, Probe, make_probe
from acceval.probes.spec import Energy
from acceval.study import Endpoint
from acceval.targets import OpenAITarget, make_target, target_names
from acceval.tasks import BUILTIN_CHECKERS, checker_names, make_checker

ROOT = Path(__file__).resolve().parents[2]
EP = Endpoint(base_url="http://127.0.0.1:9/v1", model="m")


@pytest.fixture(autouse=True)
def _fresh_discovery() -> Iterator[None]:
    plugins.refresh()
    yield
    plugins.refresh()


# --- built-ins ---------------------------------------------------------------------------

def test_the_builtin_table_is_what_pyproject_registers() -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]
    assert {g: declared[g] for g in GROUPS} == {g: dict(v) for g, v in BUILTINS.items()}


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_every_group_lists_its_builtins(group: str) -> None:
    assert set(BUILTINS[group]) <= set(installed(group))
    assert installed(group) == sorted(installed(group))
    for p in plugins.registered(group):
        if p.name in BUILTINS[group]:
            assert p.builtin and p.value == BUILTINS[group][p.name]


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_the_install_metadata_registers_the_builtins(group: str) -> None:
    ours = {ep.name: ep.value for ep in entry_points(group=group)
            if ep.dist is not None and ep.dist.name == plugins.BUILTIN_DIST}
    if not ours:
        pytest.skip(f"this install's metadata predates the {group} group; "
                    "`pip install -e .` refreshes it")
    assert ours == dict(BUILTINS[group])


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_builtins_survive_install_metadata_that_predates_them(
        group: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plugins, "entry_points", lambda **params: EntryPoints([]))
    plugins.refresh()
    assert installed(group) == sorted(BUILTINS[group])
    for name in BUILTINS[group]:
        assert load_plugin(group, name) is not None


def test_each_concept_lists_through_the_loader() -> None:
    assert engine_names() == installed("acceval.engines")
    assert checker_names() == installed("acceval.checkers")
    assert target_names() == installed("acceval.targets")
    assert set(BUILTIN_CHECKERS) == set(BUILTINS["acceval.checkers"])


def test_builtins_load_and_are_what_their_group_expects() -> None:
    assert load_plugin("acceval.targets", "openai") is OpenAITarget
    assert isinstance(make_target("t", EP), OpenAITarget)
    for name in BUILTINS["acceval.probes"]:
        url = "http://127.0.0.1:9400/metrics" if name == "dcgm" else None
        probe = make_probe(Energy(probe=name, exporter_url=url), pids=[1])
        assert isinstance(probe, Probe)
    assert isinstance(make_probe(Energy(probe="cpu")), CpuTimeProbe)
    for name in BUILTINS["acceval.checkers"]:
        assert load_plugin("acceval.checkers", name) is BUILTIN_CHECKERS[name]
    for name in BUILTINS["acceval.engines"]:
        assert isinstance(load_plugin("acceval.engines", name), type)


def test_load_plugin_is_cached_until_refresh() -> None:
    first = load_plugin("acceval.engines", "mock")
    assert load_plugin("acceval.engines", "mock") is first
    plugins.refresh()
    assert load_plugin("acceval.engines", "mock") is first  # same module object, re-resolved


# --- unknown names -----------------------------------------------------------------------

@pytest.mark.parametrize("group", sorted(GROUPS))
def test_an_unknown_name_lists_what_is_installed(group: str) -> None:
    with pytest.raises(PluginError) as err:
        load_plugin(group, "no-such-plugin")
    msg = str(err.value)
    kind = GROUPS[group]
    assert msg.startswith(f"unknown {kind} 'no-such-plugin'")
    assert f"installed {kind}s: {', '.join(installed(group))}" in msg
    assert f"'{group}' entry-point group" in msg
    assert "did you mean" not in msg
    assert isinstance(err.value, UsageError) and err.value.exit_code == 2


@pytest.mark.parametrize(("group", "typo", "meant"), [
    ("acceval.engines", "mokc", "mock"),
    ("acceval.engines", "Numpy", "numpy"),
    ("acceval.probes", "nvlm", "nvml"),
    ("acceval.targets", "opneai", "openai"),
    ("acceval.checkers", "exakt", "exact"),
])
def test_a_typo_suggests_the_closest_installed_name(group: str, typo: str, meant: str) -> None:
    with pytest.raises(PluginError, match=f"did you mean '{meant}'"):
        load_plugin(group, typo)


def test_every_call_site_gives_the_listed_installed_error() -> None:
    with pytest.raises(PluginError, match=r"unknown engine 'mokc'; did you mean 'mock'\? "
                       r"installed engines: mock, "):
        load_engine("mokc")
    with pytest.raises(PluginError, match=r"unknown target 'grpc'.*installed targets: openai"):
        make_target("t", EP, client="grpc")
    with pytest.raises(ValidationError, match=r"did you mean 'nvml'\?.*none"):
        Energy(probe="nvlm")
    with pytest.raises(StudyError) as err:
        make_checker({"type": "exakt"})
    path, msg, hint = err.value.problems[0]
    assert (path, msg) == ("checker.type", "unknown checker 'exakt'")
    assert hint.startswith("did you mean 'exact'? installed checkers: choice, contains")
    with pytest.raises(PluginError, match="unknown engine 'nope'"):  # artifact runtimes
        engine_class("nope")


def test_an_unknown_group_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="unknown plugin group"):
        installed("acceval.widgets")


# --- third parties -----------------------------------------------------------------------

ACME = '''
from acceval.engines.mock import MockEngine
from acceval.probes import CpuTimeProbe
from acceval.tasks import CheckResult


class AcmeEngine(MockEngine):
    pass


class EchoTarget:
    """A whole target client: answers every prompt with the prompt itself, at once."""

    timeout_s = 1.0

    def __init__(self, name, endpoint):
        self.name, self.endpoint = name, endpoint

    async def start(self):
        pass

    async def close(self):
        pass

    def ready_to_send(self):
        return True

    async def send(self, prompt, rec, t0_ns):
        import time
        rec.sent_ns = time.perf_counter_ns() - t0_ns
        rec.first_token_ns = rec.done_ns = rec.sent_ns + 1
        rec.chunk_ns = [rec.first_token_ns]
        rec.output_text, rec.output_tokens, rec.tokens_from = prompt.prompt, 1, "usage"
        rec.finish_reason = "stop"


def fake_probe(spec, *, pids, root):
    return CpuTimeProbe(pids, 1.0, name="acme")


class Palindrome:
    def __init__(self, reference, ignore_case=False):
        self.ignore_case = ignore_case

    def check(self, output, *, finish_reason=None):
        text = (output or "").strip()
        text = text.lower() if self.ignore_case else text
        ok = bool(text) and text == text[::-1]
        return CheckResult(ok, "correct" if ok else "wrong", None)
'''


def _dist(root: Path, name: str, entry_points_txt: str) -> None:
    info = root / f"{name}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(textwrap.dedent(entry_points_txt))


@pytest.fixture
def acme(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    (tmp_path / "acme_plugins.py").write_text(ACME)
    _dist(tmp_path, "acme_plugins", """
        [acceval.engines]
        acme = acme_plugins:AcmeEngine

        [acceval.targets]
        echo = acme_plugins:EchoTarget

        [acceval.probes]
        acme-cpu = acme_plugins:fake_probe

        [acceval.checkers]
        palindrome = acme_plugins:Palindrome
        broken = acme_plugins_gone:Checker
        """)
    monkeypatch.syspath_prepend(str(tmp_path))
    plugins.refresh()
    yield tmp_path
    sys.modules.pop("acme_plugins", None)


def test_a_third_party_distribution_plugs_into_every_group(acme: Path) -> None:
    assert "acme" in engine_names() and "echo" in target_names()
    assert {"palindrome", "broken"} <= set(checker_names())
    assert [p.dist for p in plugins.registered("acceval.engines") if p.name == "acme"] == [
        "acme_plugins"]
    engine = load_engine("acme", output_tokens=2)
    assert type(engine).__name__ == "AcmeEngine"
    target = make_target("t", EP, client="echo")
    assert type(target).__name__ == "EchoTarget" and target.name == "t"
    spec = Energy(probe="acme-cpu")
    probe = make_probe(spec, pids=[1])
    assert isinstance(probe, CpuTimeProbe) and probe.name == "acme"
    checker = make_checker({"type": "plugin", "name": "palindrome", "ignore_case": True},
                           reference=None)
    assert checker.check("Level").correct and not checker.check("levels").correct


def test_a_plugin_that_fails_to_import_says_which_and_why(acme: Path) -> None:
    with pytest.raises(PluginError, match=r"checker plugin 'broken' \(acme_plugins_gone:Checker"
                       r", from acme_plugins\) failed to load: ModuleNotFoundError"):
        load_plugin("acceval.checkers", "broken")
    with pytest.raises(StudyError) as err:
        make_checker({"type": "plugin", "name": "broken"})
    path, msg, hint = err.value.problems[0]
    assert path == "checker.name" and "failed to load" in msg and "reinstall" in hint


def test_a_name_two_packages_register_is_refused(acme: Path) -> None:
    _dist(acme, "other_engines", """
        [acceval.engines]
        mock = acme_plugins:AcmeEngine
        """)
    plugins.refresh()
    assert installed("acceval.engines").count("mock") == 1
    with pytest.raises(PluginError, match=r"engine 'mock' is registered by 2 packages: .*"
                       r"acceval \(acceval.engines.mock:MockEngine\)"):
        load_engine("mock")
    assert type(load_engine("acme")).__name__ == "AcmeEngine"  # the others still load


def test_without_the_distribution_the_plugin_is_gone(acme: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    assert "acme" in engine_names()
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p != str(acme)])
    plugins.refresh()
    assert "acme" not in engine_names()
    with pytest.raises(PluginError, match="unknown engine 'acme'"):
        load_engine("acme")


def test_a_study_selects_a_target_client_plugin(acme: Path) -> None:
    """endpoint.client is the door: the study names the plugin, the run builds it, and the
    runner drives it like the built-in client."""
    import asyncio

    from acceval.loadgen.protocol import Prompt
    from acceval.loadgen.runner import PointSpec, run_point

    ep = Endpoint(base_url="http://127.0.0.1:9/v1", model="m", client="echo")
    target = make_target("t", ep)
    assert type(target).__name__ == "EchoTarget"
    recs: list = []
    spec = PointSpec(index=0, label="c1", kind="concurrency", level=1, seed=1,
                     min_duration_s=0.0, min_requests=3, max_duration_s=5.0)
    res = asyncio.run(run_point(target, [Prompt("a", prompt="level")], spec, recs.append,
                                t0_ns=0))
    assert res.completed >= 3 and {r.output_text for r in recs} == {"level"}
    with pytest.raises(ValidationError, match="unknown target 'ech'; did you mean 'echo'"):
        Endpoint(base_url="http://127.0.0.1:9/v1", model="m", client="ech")
