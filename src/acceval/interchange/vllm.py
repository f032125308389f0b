"""vLLM bench (``vllm bench serve --save-result [--save-detailed]``) result JSON, both ways.

The schema is ``vllm/benchmarks/serve.py`` (``benchmark()``'s result dict merged into
``result_json``); the field mapping is in docs/metrics.md. Without ``--save-detailed`` the
file has no per-request lists (``start_times``, ``ttfts``, ``itls``...): the point is then
imported as the peer's figures only (``summary_only``).

Export writes one such file per load point, detailed, with the ``--metadata`` keys
``acceval_*`` naming the target, load point and run, so that an exported file reads back
into the same points (tests/unit/interchange: the round trip).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from itertools import pairwise
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from acceval.interchange._common import (
    NS_PER_S,
    ImportedPoint,
    Unmapped,
    closed_loop,
    label_of,
    need,
    ns,
    number,
)
from acceval.metrics import Distribution
from acceval.metrics.derive import decode_stamps
from acceval.results.records import ERROR_KINDS, Record
from acceval.results.section import PeerFigures, PointResult
from acceval.run_result import RunResult, TargetResult

TOOL = "vllm bench serve"
WHAT = "vLLM bench result JSON"
_PER_REQUEST = ("input_lens", "output_lens", "ttfts", "itls", "latencies", "start_times",
                "queue_times", "generated_texts", "errors")
_SETUP = frozenset({"date", "endpoint_type", "backend", "label", "model_id", "tokenizer_id",
                    "num_prompts", "request_rate", "burstiness", "max_concurrency"})
_SUMMARY = frozenset({"duration", "completed", "failed", "total_input_tokens",
                      "total_output_tokens", "request_throughput", "request_goodput",
                      "output_throughput", "total_token_throughput",
                      "max_output_tokens_per_s", "max_concurrent_requests", "rtfx"})
_STAT = re.compile(r"^(mean|median|std|p\d+(?:\.\d+)?)_(ttft|tpot|itl|e2el)_ms$")
_META = "acceval_"
# acceval's distribution fields, as vLLM names the metric and the statistic.
_METRICS = {"ttft": "ttft_ms", "tpot": "tpot_ms", "itl": "itl_ms", "e2el": "e2e_ms"}
_PERCENTILES = (("p50", "p50"), ("p90", "p90"), ("p95", "p95"), ("p99", "p99"), ("p99.9", "p999"))


def read(path: Path, data: Any, unmapped: Unmapped) -> list[ImportedPoint]:
    """The points of one vLLM result file: one JSON object, or ``--append-result`` lines."""
    if isinstance(data, list):
        return [p for i, d in enumerate(data) for p in _read_one(path, d, unmapped, i)]
    return _read_one(path, data, unmapped, None)


def _read_one(path: Path, d: Any, unmapped: Unmapped, line: int | None) -> list[ImportedPoint]:
    need(d, "completed", path, WHAT)
    where = f"{path.name}" + (f" line {line + 1}" if line is not None else "")
    meta = {k[len(_META):]: v for k, v in d.items() if k.startswith(_META)}
    mapped = _SETUP | _SUMMARY | set(_PER_REQUEST) | {k for k in d if _STAT.match(k)} | {
        k for k in d if k.startswith(_META)}
    unmapped.rest(d, mapped, "")
    figures = {k: number(d[k]) for k in sorted(_SUMMARY | {k for k in d if _STAT.match(k)})
               if k in d}
    rate = number(d.get("request_rate"))  # "inf": all at once
    conc = d.get("max_concurrency")
    burst = number(d.get("burstiness")) or 1.0
    kind, level, requested = _load(meta, rate, conc, burst, d)
    model = str(d.get("model_id") or "model")
    target = str(meta.get("target") or d.get("label") or model.rsplit("/", 1)[-1])
    label = str(meta.get("load_label") or _label(kind, level, burst, rate, conc))
    detailed = all(k in d and isinstance(d[k], list) for k in ("start_times", "ttfts", "itls"))
    peer = PeerFigures(tool=TOOL, file=where, figures=figures, summary_only=not detailed)
    point = ImportedPoint(target=target, label=label, kind=kind, level=level,
                          requested_rate_rps=requested, peer=peer, model=model,
                          api="chat" if "chat" in str(d.get("backend", "")) else "completions",
                          slo=meta.get("slo") if isinstance(meta.get("slo"), dict) else None)
    if detailed:
        point.records = _records(d, kind, target, label, path, unmapped)
    return [point]


def _load(meta: dict[str, Any], rate: float | None, conc: Any, burst: float,
          d: dict[str, Any]) -> tuple[str, float, float | None]:
    if "kind" in meta and "level" in meta:
        kind, level = str(meta["kind"]), float(meta["level"])
        return kind, level, (None if closed_loop(kind) else level)
    if rate is None:
        # request_rate inf: every request at once, or as many as max_concurrency allows.
        level = float(conc or d.get("num_prompts") or d.get("completed") or 1)
        return "concurrency", level, None
    return ("poisson" if burst == 1.0 else "gamma"), rate, rate


def _label(kind: str, level: float, burst: float, rate: float | None, conc: Any) -> str:
    if rate is None and conc is None:
        return f"burst of {int(level)} (request_rate inf)"
    cap = f", max_concurrency {conc}" if conc is not None and rate is not None else ""
    return label_of(kind, level, burst) + cap


def _records(d: dict[str, Any], kind: str, target: str, label: str, path: Path,
             unmapped: Unmapped) -> list[Record]:
    starts = d["start_times"]
    n = len(starts)
    for key in _PER_REQUEST:
        if key in d and isinstance(d[key], list) and len(d[key]) != n:
            raise ValueError(f"{path}: '{key}' has {len(d[key])} entries, 'start_times' {n}; "
                             "the per-request lists must be the same length")
    first = min(float(s) for s in starts) if n else 0.0
    col: dict[str, list[Any]] = {}
    for k in _PER_REQUEST:
        v = d.get(k)
        col[k] = v if isinstance(v, list) else [None] * n
    out = []
    for i in range(n):
        sent = ns(float(starts[i]) - first)
        error = col["errors"][i] or None
        latency = number(col["latencies"][i])
        rec = Record(target=target, load_index=0, load_label=label, request_id=i,
                     task_id=f"vllm-{i}", sent_ns=sent,
                     done_ns=sent + ns(latency) if latency is not None else None,
                     prompt_tokens=_int(col["input_lens"][i]),
                     output_text=col["generated_texts"][i], tokens_from="usage")
        queue = number(col["queue_times"][i])
        if not closed_loop(kind) and queue is not None:
            rec.scheduled_ns = sent - ns(queue)  # the arrival the schedule gave it
        if error is not None:
            rec.error_kind, rec.error_detail = _error(str(error))
        else:
            rec.output_tokens = _int(col["output_lens"][i])
            ttft = number(col["ttfts"][i])
            if ttft is None:  # null: acceval's export of an answer that did not stream
                if col["ttfts"][i] is not None:
                    unmapped.add("ttfts[] (not a number)")
                out.append(rec)
                continue
            rec.first_token_ns = sent + ns(ttft)
            at, chunks = rec.first_token_ns, [rec.first_token_ns]
            for gap in col["itls"][i] or []:
                at += ns(float(gap))
                chunks.append(at)
            rec.chunk_ns = chunks
        out.append(rec)
    return out


def _error(text: str) -> tuple[str, str]:
    """(error kind, detail): the kind acceval's export wrote before the detail (``http:
    HTTP 500``), else ``peer`` (vLLM's own file holds the error text only)."""
    kind, sep, detail = text.partition(": ")
    if sep and kind in ERROR_KINDS and kind != "peer":
        return kind, detail[:2000]
    return "peer", text[:2000]


def _int(v: Any) -> int | None:
    x = number(v)
    return None if x is None else int(x)


# --- export ----------------------------------------------------------------------------------

def export_run(result: RunResult, records: pa.Table) -> list[tuple[str, dict[str, Any]]]:
    """One vLLM bench result (file name, JSON object) per measured point of every target:
    the first runs and their repeats, the sweep's points; not the replay or interruption."""
    out = []
    date = dt.datetime.fromisoformat(result.created_utc).strftime("%Y%m%d-%H%M%S")
    for t in result.targets:
        rows = records.filter(pc.equal(records["target"], t.name))
        points = [*t.points, *(p for r in t.repeats for p in r.points)]
        for p in sorted(points, key=lambda p: p.index):
            sel = rows.filter(pc.equal(rows["load_index"], p.index))
            name = re.sub(r"[^A-Za-z0-9.]+", "-", f"{t.name}-{p.label}").strip("-")
            out.append((f"{name}.json", point_json(result, t, p, sel, date)))
    return out


def _dist(key: str, dist: Distribution) -> dict[str, float | None]:
    out = {f"mean_{key}_ms": dist.mean, f"median_{key}_ms": dist.p50,
           f"std_{key}_ms": dist.std}
    out.update({f"{word}_{key}_ms": getattr(dist, name) for word, name in _PERCENTILES})
    return out


def point_json(result: RunResult, t: TargetResult, p: PointResult, sel: pa.Table,
               date: str) -> dict[str, Any]:
    """vLLM bench's result JSON of one point: setup, summary, per-request lists (measured
    rows only: vLLM keeps warm-ups out of its outputs), statistics."""
    s = p.summary
    api = t.endpoint.api if t.endpoint is not None else "completions"
    backend = "openai-chat" if api == "chat" else "openai"
    model = t.endpoint.model if t.endpoint is not None else t.name
    rows = sel.filter(pc.invert(sel["warmup"])).to_pylist()
    rows.sort(key=lambda r: (r["sent_ns"] is None, r["sent_ns"] or 0, r["request_id"]))
    closed = closed_loop(p.kind)
    out: dict[str, Any] = {
        "date": date, "endpoint_type": backend, "backend": backend, "label": f"acceval-{t.name}",
        "model_id": model, "tokenizer_id": model, "num_prompts": s.requests,
        "acceval_target": t.name, "acceval_load_label": p.label, "acceval_kind": p.kind,
        "acceval_level": f"{p.level:g}", "acceval_run_id": result.run_id,
        "acceval_slo": s.slo.model_dump(exclude_defaults=True) if s.slo_values_ms else None,
        "request_rate": "inf" if closed else p.level,
        "burstiness": _burstiness(result, p),
        "max_concurrency": int(p.level) if closed else None,
        "duration": s.duration_s, "completed": s.ok, "failed": s.errors,
        "total_input_tokens": s.prompt_tokens_total, "total_output_tokens": s.output_tokens_total,
        "request_throughput": s.request_throughput_rps,
        "request_goodput": s.goodput_rps if s.slo_values_ms else None,
        "output_throughput": s.output_token_throughput_tps,
        "total_token_throughput": s.total_token_throughput_tps,
    }
    out.update(_lists(rows))
    out.update({"max_output_tokens_per_s": None, "max_concurrent_requests": s.max_in_flight,
                "rtfx": 0.0})
    for key, field in _METRICS.items():
        out.update(_dist(key, getattr(s, field)))
    return out


def _burstiness(result: RunResult, p: PointResult) -> float:
    """The gamma shape of the point's family in the study as run (1: Poisson, and what every
    other family holds)."""
    for fam in result.study.load:
        if fam.kind == p.kind and p.level in fam.levels:
            return fam.burstiness
    return 1.0


def _lists(rows: list[dict[str, Any]]) -> dict[str, list[Any]]:
    sent = [r["sent_ns"] for r in rows if r["sent_ns"] is not None]
    t0 = min(sent) if sent else 0
    cols: dict[str, list[Any]] = {k: [] for k in _PER_REQUEST}
    for r in rows:
        start = r["sent_ns"] if r["sent_ns"] is not None else t0
        ok = r["error_kind"] is None
        first = r["first_token_ns"]
        chunks = [c for c in decode_stamps(r["chunk_ns"] or [], r["output_tokens"],
                                           r.get("finish_reason"), r.get("finish_ns"),
                                           r["done_ns"]) if first is not None and c >= first]
        # Unknown counts and a TTFT that was not measured stay null (vLLM always knows
        # them), so that they read back missing rather than 0.
        cols["input_lens"].append(r["prompt_tokens"])
        cols["output_lens"].append(r["output_tokens"] if ok else 0)
        ttft = None if first is None else (first - start) / NS_PER_S
        cols["ttfts"].append(ttft if ok else 0.0)
        cols["itls"].append([(b - a) / NS_PER_S for a, b in pairwise(chunks)] if ok else [])
        done = r["done_ns"]
        cols["latencies"].append((done - start) / NS_PER_S if done is not None else 0.0)
        cols["start_times"].append((start - t0) / NS_PER_S)
        sched = r["scheduled_ns"]
        cols["queue_times"].append((start - sched) / NS_PER_S if sched is not None else 0.0)
        cols["generated_texts"].append(r["output_text"] or "")
        cols["errors"].append("" if ok else f"{r['error_kind']}: {r['error_detail'] or ''}")
    return cols


def dumps(obj: dict[str, Any]) -> str:
    """As vLLM writes it (``json.dump``), NaN-free: missing is null."""
    return json.dumps(obj, allow_nan=False)

