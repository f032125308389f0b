"""AIPerf ``profile_export.jsonl`` (one JSON object per request), read.

Each line has ``metadata`` (``request_start_ns``, ``request_ack_ns``, ``request_end_ns``,
``benchmark_phase``...) and ``metrics`` (``{"value": ..., "unit": ...}`` each). The load
setting is not in the lines: it is read from ``profile_export_aiperf.json`` beside the file
(``input_config.phases``), whose headline statistics are kept as the peer's figures; without
it the point is labelled by its observed peak of requests in flight. The summary file given
alone is a point of the peer's figures without requests (``summary_only``). AIPerf 0.8 and
earlier keep the load in ``input_config.loadgen`` and the model in
``input_config.endpoint.model_names``; later versions in ``input_config.phases`` and
``input_config.models``. Mapping: docs/metrics.md.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from acceval.interchange._common import (
    NS_PER_MS,
    ImportedPoint,
    Unmapped,
    closed_loop,
    label_of,
    loads,
    number,
    on_one_timeline,
    read_json,
)
from acceval.results.records import Record
from acceval.results.section import PeerFigures

TOOL = "aiperf"
WHAT = "AIPerf profile_export.jsonl"
SUMMARY_FILE = "profile_export_aiperf.json"
_META_MAPPED = frozenset({"x_request_id", "request_start_ns", "request_ack_ns",
                          "request_end_ns", "credit_issued_ns", "benchmark_phase",
                          "was_cancelled"})
_METRICS_MAPPED = frozenset({
    "time_to_first_token", "inter_chunk_latency", "usage_prompt_tokens",
    "usage_completion_tokens", "input_sequence_length", "output_sequence_length",
    # AIPerf's per-request derivations; acceval derives its own from the stamps.
    "request_latency", "inter_token_latency", "time_to_second_token",
    "time_to_first_output_token", "output_token_count", "usage_total_tokens",
    "decode_duration", "e2e_output_token_throughput", "output_token_throughput_per_user",
    "prefill_throughput_per_user"})
_FIGURES = ("time_to_first_token", "inter_token_latency", "request_latency",
            "request_throughput", "output_token_throughput")


def read(path: Path, text: str, unmapped: Unmapped) -> list[ImportedPoint]:
    whole = _whole_json(text)
    if whole is not None:
        return [_summary_point(path, whole)]
    rows: list[dict[str, Any]] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = loads(line)
        except ValueError:  # not JSON, too deep
            unmapped.add(f"line {n} (not JSON: not imported)")
            continue
        if not isinstance(obj, dict) or "metadata" not in obj:
            unmapped.add(f"line {n} (no metadata: not imported)")
            continue
        rows.append(obj)
    if not rows:
        return []  # no point from a file without one request line (each bad line is counted)
    summary = _summary(path)
    kind, level, requested, label = _load(summary, rows)
    model = _model(summary)
    records = [r for r in (_record(o, model, label, kind, unmapped) for o in rows)
               if r is not None]
    on_one_timeline(records, closed=False)
    if closed_loop(kind) and level == 0:
        level = float(_peak(records) or 1)
        label = f"concurrency {int(level)} (peak observed; no {SUMMARY_FILE})"
    peer = PeerFigures(tool=TOOL, version=(summary or {}).get("aiperf_version"),
                       file=path.name, figures=_figures(summary), summary_only=False)
    return [ImportedPoint(target=model, label=label, kind=kind, level=level,
                          requested_rate_rps=requested, peer=peer, records=records,
                          base_url=_base_url(summary), model=model)]


def _whole_json(text: str) -> dict[str, Any] | None:
    """The file as one JSON object when it is AIPerf's summary (``profile_export_aiperf.json``
    given instead of the per-request lines): a dict without per-request ``metadata``."""
    try:
        obj = loads(text)  # bounded like every line: too deep is not a summary either
    except ValueError:
        return None
    return obj if isinstance(obj, dict) and "metadata" not in obj else None


def _summary_point(path: Path, summary: dict[str, Any]) -> ImportedPoint:
    """A summary file alone: the peer's figures as a point without requests, as a vLLM
    result without ``--save-detailed`` is; the per-request file beside it gives the rest."""
    if "input_config" not in summary and not _figures(summary):
        raise ValueError(f"one JSON object that is neither AIPerf's {SUMMARY_FILE} nor "
                         f"{WHAT} lines (give the per-request profile_export.jsonl)")
    kind, level, requested, label = _load(summary, [])
    if not label:
        label = "summary only (load not in the file)"
    peer = PeerFigures(tool=TOOL, version=summary.get("aiperf_version"), file=path.name,
                       figures=_figures(summary), summary_only=True)
    model = _model(summary)
    return ImportedPoint(target=model, label=label, kind=kind, level=level or 1.0,
                         requested_rate_rps=requested, peer=peer,
                         base_url=_base_url(summary), model=model)


def _base_url(summary: dict[str, Any] | None) -> str | None:
    endpoint = ((summary or {}).get("input_config") or {}).get("endpoint") or {}
    urls = endpoint.get("urls") or ([endpoint["url"]] if endpoint.get("url") else None)
    return f"{str(urls[0]).rstrip('/')}/v1" if urls else None


def _summary(path: Path) -> dict[str, Any] | None:
    """``profile_export_aiperf.json`` beside the file (or beside it with our prefix)."""
    for name in (SUMMARY_FILE, path.name.replace("profile_export.jsonl", SUMMARY_FILE)):
        candidate = path.with_name(name)
        if candidate != path and candidate.is_file():
            data = read_json(candidate, "AIPerf summary")
            return data if isinstance(data, dict) else None
    return None


def _model(summary: dict[str, Any] | None) -> str:
    """``input_config.models.items[0].name`` (AIPerf 0.13), else
    ``input_config.endpoint.model_names[0]`` (AIPerf 0.8 and earlier)."""
    config = (summary or {}).get("input_config") or {}
    items = (config.get("models") or {}).get("items") or []
    if items and isinstance(items[0], dict) and items[0].get("name"):
        return str(items[0]["name"])
    names = (config.get("endpoint") or {}).get("model_names") or []
    return str(names[0]) if names else "model"


def _load(summary: dict[str, Any] | None,
          rows: list[dict[str, Any]]) -> tuple[str, float, float | None, str]:
    config = (summary or {}).get("input_config") or {}
    phases = config.get("phases") or []
    prof = next((p for p in phases if isinstance(p, dict) and p.get("kind") == "profiling"),
                None)
    if prof is None and isinstance(config.get("loadgen"), dict):
        # AIPerf 0.8 and earlier: one load setting, input_config.loadgen.
        gen = config["loadgen"]
        prof = {"request_rate": gen.get("request_rate"), "concurrency": gen.get("concurrency"),
                "arrival_pattern": gen.get("request_rate_mode")}
    if prof is not None:
        rate = number(prof.get("request_rate") or prof.get("rate"))
        if rate is not None:
            pattern = str(prof.get("arrival_pattern") or "poisson")
            kind = "constant" if pattern == "constant" else "poisson"
            return kind, rate, rate, label_of(kind, rate)
        conc = prof.get("concurrency")
        if conc:
            return "concurrency", float(conc), None, label_of("concurrency", float(conc))
    return "concurrency", 0.0, None, ""


def _figures(summary: dict[str, Any] | None) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for name in _FIGURES:
        stat = (summary or {}).get(name)
        if isinstance(stat, dict):
            for key in ("avg", "p50", "p95", "p99", "std"):
                if key in stat:
                    out[f"{name}.{key}"] = number(stat[key])
    return out


def _value(metrics: dict[str, Any], name: str) -> Any:
    m = metrics.get(name)
    return m.get("value") if isinstance(m, dict) else None


def _record(o: dict[str, Any], model: str, label: str, kind: str,
            unmapped: Unmapped) -> Record | None:
    meta, metrics = o.get("metadata") or {}, o.get("metrics") or {}
    unmapped.rest(o, {"metadata", "metrics", "error"}, "")
    unmapped.rest(metrics, _METRICS_MAPPED, "metrics.")
    start = number(meta.get("request_start_ns"))
    if start is None:
        unmapped.add("line (no metadata.request_start_ns: not imported)")
        return None
    sent = int(start)
    ttft = number(_value(metrics, "time_to_first_token"))
    end = number(meta.get("request_end_ns"))
    ack = number(meta.get("request_ack_ns"))
    prompt = number(_value(metrics, "usage_prompt_tokens"))
    out = number(_value(metrics, "usage_completion_tokens"))
    from_usage = prompt is not None or out is not None
    if prompt is None:
        prompt = number(_value(metrics, "input_sequence_length"))
    if out is None:
        out = number(_value(metrics, "output_sequence_length"))
    credit = number(meta.get("credit_issued_ns"))
    rec = Record(target=model, load_index=0, load_label=label, request_id=0,
                 task_id=str(meta.get("x_request_id") or ""),
                 warmup=str(meta.get("benchmark_phase") or "") == "warmup",
                 scheduled_ns=int(credit) if credit is not None and not closed_loop(kind)
                 else None,
                 sent_ns=sent, first_byte_ns=int(ack) if ack is not None else None,
                 done_ns=int(end) if end is not None else None,
                 prompt_tokens=int(prompt) if prompt is not None else None,
                 output_tokens=int(out) if out is not None else None,
                 tokens_from="usage" if from_usage else "chunks")
    error = o.get("error")
    if error or meta.get("was_cancelled"):
        rec.error_kind = "peer"
        rec.error_detail = json.dumps(error)[:2000] if error else "cancelled"
        rec.output_tokens = None
        return rec
    if ttft is None:
        unmapped.add("metrics.time_to_first_token (missing on a line without error)")
        return rec
    rec.first_token_ns = sent + round(ttft * NS_PER_MS)
    at, chunks = rec.first_token_ns, [rec.first_token_ns]
    for gap in _value(metrics, "inter_chunk_latency") or []:
        at += round(float(gap) * NS_PER_MS)
        chunks.append(at)
    rec.chunk_ns = chunks
    return rec


def _peak(records: list[Record]) -> int:
    events = sorted([(r.sent_ns, 1) for r in records if r.sent_ns is not None and r.done_ns]
                    + [(r.done_ns, -1) for r in records if r.sent_ns is not None and r.done_ns],
                    key=lambda e: (e[0], e[1]))
    peak = cur = 0
    for _, d in events:
        cur += d
        peak = max(peak, cur)
    return peak
