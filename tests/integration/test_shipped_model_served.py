"""The shipped models, served by `acceval serve` over HTTP, reach their recorded accuracy on the
fixed held-out set, and the engine speaks the OpenAI API (streaming and not, both endpoints)."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest

from acceval.models import resolve_model
from acceval.pipeline import execute
from acceval.serve import spawn_server
from acceval.study import study_from_dict

N_HELDOUT = 200


def _heldout_jsonl(model: str, path: Path) -> Path:
    art = resolve_model(f"builtin:{model}")
    lines = (art.root / "heldout.tsv").read_text(encoding="utf-8").splitlines()[:N_HELDOUT]
    with path.open("w", encoding="utf-8") as f:
        for i, line in enumerate(lines):
            prompt, answer = line.split("\t")
            # exact match on the model's own format (zero-padded sum, then EOS)
            f.write(json.dumps({"id": f"h{i}", "prompt": prompt, "reference": answer,
                                "checker": {"type": "exact"}}) + "\n")
    return path


@pytest.mark.parametrize(("model", "precision"), [("tiny", "fp32"), ("small", "int4")])
def test_served_model_reaches_its_recorded_accuracy(tmp_path: Path, model: str,
                                                    precision: str) -> None:
    card = resolve_model(f"builtin:{model}").card
    recorded = card["evaluation"]["results"][f"ortgenai-{precision}"]["exact_match"]
    tasks = _heldout_jsonl(model, tmp_path / "heldout.jsonl")
    study = study_from_dict({
        "name": "heldout",
        "tasks": {"source": f"jsonl:{tasks}", "count": N_HELDOUT, "max_tokens": 8},
        "targets": [{"name": model, "serve": {"engine": "ortgenai", "model": f"builtin:{model}",
                                              "precision": precision}}],
        "load": [{"concurrency": [8]}],
    })
    result, run_dir = execute(study, base_dir=tmp_path, out_dir=tmp_path / "runs",
                              progress=False)
    _tokens_leave_as_they_are_made(run_dir)
    acc = result.target(model).accuracy
    assert acc is not None and acc.n == N_HELDOUT and acc.accuracy is not None
    # The card's figure is over 1,000 pairs; these are the first 200 of them.
    assert abs(acc.accuracy - recorded) <= 0.08, (acc.accuracy, recorded)
    assert acc.ci_low is not None and acc.ci_high is not None
    assert acc.ci_low - 0.02 <= recorded <= acc.ci_high + 0.02


def _tokens_leave_as_they_are_made(run_dir: Path) -> None:
    """The engine streams: an answer's tokens reach the client at several moments, not in
    one write (which made TTFT = E2E and TPOT = 0 on acceval's own engines)."""
    from acceval.results.store import read_records

    rows = read_records(run_dir, ["chunk_ns", "error_kind"]).to_pylist()
    streamed = [r["chunk_ns"] for r in rows if r["error_kind"] is None and len(r["chunk_ns"]) >= 3]
    assert streamed
    spread = sum(1 for c in streamed if len(set(c)) >= 2)
    assert spread >= 0.5 * len(streamed), (spread, len(streamed))


def _post(url: str, body: dict[str, object]) -> bytes:
    req = urllib.request.Request(url, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return bytes(resp.read())


def test_ortgenai_engine_speaks_the_openai_api() -> None:
    opts = {"model": "builtin:tiny", "precision": "fp32"}
    with spawn_server("ortgenai", options=opts) as server:
        models = json.loads(urllib.request.urlopen(f"{server.base_url}/models").read())
        model = models["data"][0]["id"]
        body = json.loads(_post(f"{server.base_url}/completions",
                                {"model": model, "prompt": "045+123=", "max_tokens": 8}))
        assert body["choices"][0]["text"].strip() == "0168"
        assert body["usage"]["completion_tokens"] >= 4
        chat = json.loads(_post(f"{server.base_url}/chat/completions", {
            "model": model, "max_tokens": 8,
            "messages": [{"role": "user", "content": "100+200="}]}))
        assert chat["choices"][0]["message"]["content"].strip() == "0300"
        raw = _post(f"{server.base_url}/completions", {
            "model": model, "prompt": "999+001=", "max_tokens": 8, "stream": True,
            "stream_options": {"include_usage": True}}).decode()
        events = [e.removeprefix("data: ") for e in raw.split("\n\n") if e.startswith("data: ")]
        assert events[-1] == "[DONE]"
        chunks = [json.loads(e) for e in events[:-1]]
        text = "".join(c["choices"][0]["text"] for c in chunks if c["choices"])
        assert text.strip() == "1000"
        assert chunks[-1]["usage"]["completion_tokens"] >= 4
        short = json.loads(_post(f"{server.base_url}/completions",
                                 {"model": model, "prompt": "045+123=", "max_tokens": 2}))
        assert short["choices"][0]["finish_reason"] == "length"
        assert short["usage"]["completion_tokens"] == 2
