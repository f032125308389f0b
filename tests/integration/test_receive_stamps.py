"""A local server measured with kernel receive stamps (``serve.receive_stamps: kernel``): the
study says so, the run records it, the report shows it, and every answer is timed."""

from __future__ import annotations

from pathlib import Path

import pytest

from acceval.errors import StudyError
from acceval.pipeline import execute
from acceval.report.markdown import render_markdown
from acceval.study import study_from_dict
from acceval.targets._stamped import kernel_stamps

pytestmark = pytest.mark.skipif(not kernel_stamps(), reason="receive stamps are Linux's")


def _study(serve: dict[str, object]) -> dict[str, object]:
    return {"name": "stamps",
            "tasks": {"source": "builtin:arithmetic", "count": 24, "seed": 3, "max_tokens": 8},
            "targets": [{"name": "m", "serve": {"engine": "mock", "options": {
                "answers": "@tasks", "ttft_ms": 3, "itl_ms": 1}, **serve},
                "price": {"usd_per_hour": 1.0, "source": "test figure"}}],
            "load": [{"concurrency": [4]}]}


def test_a_local_server_measured_with_kernel_stamps_says_so_everywhere(tmp_path: Path) -> None:
    study = study_from_dict(_study({"receive_stamps": "kernel"}))
    result, _ = execute(study, base_dir=tmp_path, out_dir=tmp_path / "runs", progress=False)
    t = result.target("m")
    assert t.endpoint is not None and t.endpoint.receive_stamps == "kernel"
    (point,) = t.points
    s = point.summary
    assert s.errors == 0 and s.ok == s.requests >= 24
    # Answers come after the mock's 3 ms to the first token, whatever stamped them.
    assert s.ttft_ms.p50 is not None and s.ttft_ms.p50 >= 3.0
    assert "native, kernel receive stamps" in render_markdown(result)


def test_kernel_stamps_with_the_aiohttp_client_are_refused_before_any_load() -> None:
    with pytest.raises(StudyError) as info:
        study_from_dict(_study({"receive_stamps": "kernel", "transport": "aiohttp"}))
    assert any("transport: native" in msg for _, msg, _ in info.value.problems)


def test_serve_and_endpoint_stamps_that_differ_are_refused() -> None:
    data = _study({"receive_stamps": "kernel"})
    target = data["targets"][0]  # type: ignore[index]
    target["endpoint"] = {"base_url": "http://127.0.0.1:9/v1", "model": "mock"}
    with pytest.raises(StudyError) as info:
        study_from_dict(data)
    assert any("serve.receive_stamps and endpoint.receive_stamps differ" in msg
               for _, msg, _ in info.value.problems)
