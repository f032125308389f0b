"""Two report parts: the figures peer tools computed for imported points (labelled
peer-computed, beside acceval's own from the imported requests), and the intervals over a
point's repeats."""

from __future__ import annotations

from acceval.metrics.repeats import RepeatInterval
from acceval.report._fmt import NOT_MEASURED
from acceval.run_result import RunResult
from acceval.units import number

PEER_HEAD = ["target", "load", "tool", "file", "kind", "peer-computed figure", "value"]
REPEATS_HEAD = ["target", "load", "runs", "TTFT p50 ms", "TTFT p95 ms", "TTFT p99 ms",
                "E2E p95 ms", "req/s", "output tok/s"]


def peer_intro(result: RunResult) -> str:
    imp = result.log.imported
    if imp is None:
        return ""
    return (f"Imported from {imp.format} ({', '.join(imp.files)}). acceval's numbers above "
            "are recomputed from the imported requests; below are the figures the peer tool "
            "computed itself, under its own names (peer-computed; docs/metrics.md maps them). "
            f"Fields or lines not mapped: {sum(imp.unmapped.values())}.")


def peer_rows(result: RunResult) -> list[list[str]]:
    out = []
    for t in result.targets:
        for p in t.points:
            if p.peer is None:
                continue
            kind = "summary only" if p.peer.summary_only else "with requests"
            tool = p.peer.tool + (f" {p.peer.version}" if p.peer.version else "")
            for name, value in p.peer.figures.items():
                out.append([t.name, p.label, tool, p.peer.file, kind, name,
                            NOT_MEASURED if value is None else f"{number(value)}"])
    return out


def _ci(i: RepeatInterval) -> str:
    if i.mean is None:
        return NOT_MEASURED
    if i.low is None or i.high is None:
        return f"{number(i.mean)}"
    return f"{number(i.mean)} [{number(i.low)}, {number(i.high)}]"


def repeats_rows(result: RunResult) -> list[list[str]]:
    return [[t.name, r.label, str(r.runs), _ci(r.ttft_p50_ms), _ci(r.ttft_p95_ms),
             _ci(r.ttft_p99_ms), _ci(r.e2e_p95_ms), _ci(r.request_throughput_rps),
             _ci(r.output_token_throughput_tps)]
            for t in result.targets for r in t.repeats]


REPEATS_INTRO = ("Each point measured several times (load[].repeats): the mean over the runs "
                 "and its 95 % Student t-interval. The first run is the point above, which "
                 "capacity, the bill and the verdict use.")
