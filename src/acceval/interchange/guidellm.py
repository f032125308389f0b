"""GuideLLM ``benchmarks.json`` (``guidellm run --output kind=json``), read.

Each entry of ``benchmarks`` is one load point (its ``config.strategy``); its
``requests.successful / errored / incomplete`` lists are the sampled per-request stats, with
``info.timings`` stamps (``time.time()`` seconds). ``metrics`` holds GuideLLM's own
distributions; the headline ones are kept as the peer's figures. Mapping: docs/metrics.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acceval.interchange._common import (
    ImportedPoint,
    Unmapped,
    closed_loop,
    label_of,
    need,
    ns,
    number,
    on_one_timeline,
)
from acceval.results.records import Record
from acceval.results.section import PeerFigures

TOOL = "guidellm"
WHAT = "GuideLLM benchmarks.json"
_STATUSES = {"successful": None, "errored": "peer", "incomplete": "peer"}
_REQUEST_MAPPED = frozenset({
    "request_id", "output", "info", "prompt_tokens", "output_tokens", "cached_tokens",
    "request_start_time", "request_end_time", "type_", "response_id",
    # Derived per request by GuideLLM; acceval derives its own from the stamps.
    "request_latency", "time_to_first_token_ms", "time_per_output_token_ms",
    "inter_token_latency_ms", "tokens_per_second", "output_tokens_per_second",
    "time_to_first_output_token_ms", "total_tokens", "iter_tokens_per_iteration",
    "output_tokens_per_iteration", "input_metrics", "output_metrics", "request_args",
    "request_dispatch_delay", "turn_predecessor_delay", "turn_scheduling_delay",
    "request_scheduled_latency"})
_TIMINGS_MAPPED = frozenset({"targeted_start", "request_start", "first_request_iteration",
                             "first_token_iteration", "last_token_iteration", "request_end"})
# The headline distributions kept as the peer's figures (successful requests).
_FIGURES = ("time_to_first_token_ms", "time_per_output_token_ms", "inter_token_latency_ms",
            "request_latency", "requests_per_second", "output_tokens_per_second")


def read(path: Path, data: Any, unmapped: Unmapped) -> list[ImportedPoint]:
    benches = need(data, "benchmarks", path, WHAT)
    version = (data.get("metadata") or {}).get("guidellm_version")
    # One clock for the file: GuideLLM stamps every benchmark with time.time().
    out = []
    for i, b in enumerate(benches):
        out.append(_point(path, b, i, version, unmapped))
    return out


def _point(path: Path, b: dict[str, Any], i: int, version: str | None,
           unmapped: Unmapped) -> ImportedPoint:
    cfg = b.get("config") or {}
    strategy = cfg.get("strategy") or {}
    backend = cfg.get("backend") or {}
    kind, level, requested, label = _load(strategy)
    model = str(backend.get("model") or "model")
    figures = _figures(b.get("metrics") or {})
    reqs = b.get("requests") or {}
    records: list[Record] = []
    for status, error in _STATUSES.items():
        for r in reqs.get(status) or []:
            rec = _record(r, error, model, label, unmapped)
            if rec is not None:
                records.append(rec)
    unmapped.rest(reqs, set(_STATUSES) | {"total"}, "benchmarks[].requests.")
    on_one_timeline(records, closed=closed_loop(kind))
    peer = PeerFigures(tool=TOOL, version=version, file=f"{path.name} benchmarks[{i}]",
                       figures=figures, summary_only=not records)
    url = backend.get("target")
    return ImportedPoint(target=model, label=label, kind=kind, level=level,
                         requested_rate_rps=requested, peer=peer, records=records,
                         base_url=f"{str(url).rstrip('/')}/v1" if url else None, model=model,
                         api="chat" if "chat" in str(backend.get("request_format")) else
                         "completions")


def _load(strategy: dict[str, Any]) -> tuple[str, float, float | None, str]:
    kind = str(strategy.get("type_") or "")
    if kind == "synchronous":
        return "concurrency", 1.0, None, "synchronous (concurrency 1)"
    if kind in ("concurrent", "throughput"):
        streams = strategy.get("streams") or strategy.get("max_concurrency") or 1
        return "concurrency", float(streams), None, f"{kind} {streams} (concurrency)"
    rate = number(strategy.get("rate"))
    if kind in ("constant", "poisson") and rate is not None:
        return kind, rate, rate, label_of(kind, rate)
    raise ValueError(f"GuideLLM strategy {kind!r} is not one acceval maps (synchronous, "
                     "concurrent, throughput, constant, poisson)")


def _figures(metrics: dict[str, Any]) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for name in _FIGURES:
        dist = (metrics.get(name) or {}).get("successful") or {}
        for stat in ("mean", "median", "std_dev"):
            out[f"{name}.successful.{stat}"] = number(dist.get(stat))
        for p in ("p95", "p99"):
            out[f"{name}.successful.{p}"] = number((dist.get("percentiles") or {}).get(p))
    return out


def _record(r: dict[str, Any], error: str | None, model: str, label: str,
            unmapped: Unmapped) -> Record | None:
    info = r.get("info") or {}
    t = info.get("timings") or {}
    unmapped.rest(r, _REQUEST_MAPPED, "benchmarks[].requests[].")
    unmapped.rest(t, _TIMINGS_MAPPED | {"queued", "dequeued", "scheduled_at", "resolve_start",
                                        "last_request_iteration", "request_iterations",
                                        "token_iterations", "resolve_end", "finalized",
                                        "request_sent_sum", "request_sent_count",
                                        "token_received_sum", "token_received_count"},
                  "benchmarks[].requests[].info.timings.")
    unmapped.rest(info, {"timings", "error", "status", "request_id", "started_at",
                         "completed_at", "traceback"}, "benchmarks[].requests[].info.")
    start = number(t.get("request_start")) or number(r.get("request_start_time"))
    if start is None:
        unmapped.add("benchmarks[].requests[] (no request_start: not imported)")
        return None

    def stamp(key: str) -> int | None:
        v = number(t.get(key))
        return None if v is None else ns(v)

    first, last = stamp("first_token_iteration"), stamp("last_token_iteration")
    end = stamp("request_end") or (ns(v) if (v := number(r.get("request_end_time"))) else None)
    rec = Record(target=model, load_index=0, load_label=label, request_id=0,
                 task_id=str(r.get("request_id") or ""), scheduled_ns=stamp("targeted_start"),
                 sent_ns=ns(start), first_byte_ns=stamp("first_request_iteration"),
                 first_token_ns=first, done_ns=end,
                 prompt_tokens=_int(r.get("prompt_tokens")),
                 output_tokens=_int(r.get("output_tokens")), tokens_from="usage",
                 output_text=r.get("output"),
                 cached_prompt_tokens=_int(r.get("cached_tokens")))
    # GuideLLM keeps the first and last token iterations, not every chunk: two stamps give
    # TPOT and the mean inter-token gap, as GuideLLM's own ITL ((last - first) / (n - 1)).
    rec.chunk_ns = [c for c in (first, last) if c is not None]
    if len(rec.chunk_ns) == 2 and rec.chunk_ns[0] == rec.chunk_ns[1]:
        rec.chunk_ns = rec.chunk_ns[:1]
    if error is not None:
        rec.error_kind = error
        rec.error_detail = str(info.get("error") or info.get("status") or "errored")[:2000]
        rec.output_tokens = None
    return rec


def _int(v: Any) -> int | None:
    x = number(v)
    return None if x is None else int(x)
