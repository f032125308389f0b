"""A local `serve:` target chooses its transport like an endpoint does (serve.transport)."""

from __future__ import annotations

from pathlib import Path

import pytest

from acceval.errors import StudyError
from acceval.pipeline import execute
from acceval.study import study_from_dict


def _study(serve: dict[str, object], **target: object) -> dict[str, object]:
    return {"name": "local-transport", "tasks": {"count": 20, "max_tokens": 8},
            "targets": [{"name": "m", "serve": {"engine": "mock", **serve}, **target}],
            "load": [{"concurrency": [2]}]}


def test_a_local_server_is_measured_by_the_transport_it_names(tmp_path: Path) -> None:
    study = study_from_dict(_study({"transport": "aiohttp", "options": {"ttft_ms": 1}}))
    result, _ = execute(study, base_dir=tmp_path, out_dir=tmp_path / "runs", progress=False)
    (tlog,) = result.log.targets
    assert tlog.endpoint is not None and tlog.endpoint.transport == "aiohttp"
    point = result.target("m").points[0]
    assert point.completed == point.sent >= 20


def test_two_different_transports_for_one_target_are_refused() -> None:
    with pytest.raises(StudyError) as err:
        study_from_dict(_study({"transport": "aiohttp", "port": 18999},
                               endpoint={"base_url": "http://127.0.0.1:18999/v1",
                                         "model": "mock", "transport": "native"}))
    assert "endpoint.transport" in str(err.value.problems)
