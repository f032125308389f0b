"""The server-side latency part of the reports: per load point, the client's mean TTFT, E2E,
TPOT and ITL beside the server's own histograms' means, the difference (what the request
spent outside the server's clock), and the server's queue, prefill and decode time
(result.targets[*].telemetry.points[*].server_latency)."""

from __future__ import annotations

from acceval.report._fmt import NOT_MEASURED, num
from acceval.run_result import RunResult
from acceval.telemetry.latency import LatencyPair, ServerLatency

HEAD = ["target", "load", "TTFT ms client / server", "TTFT outside ms",
        "E2E ms client / server", "E2E outside ms", "TPOT ms client / server",
        "ITL ms client / server", "queue ms", "prefill ms", "decode ms", "tokens / step",
        "prompt cached (server)"]

INTRO = ("The server's own latency, from the increase of its histograms' sums and counts over "
         "each point (means: the buckets are too coarse for percentiles), beside the "
         "client's means of the same requests. \"Outside\" is client less server: the "
         "network, the HTTP layer (vLLM stamps a request's arrival once its API server has "
         "parsed it, and a token before it is detokenized and written) and the client "
         "itself. The server's queue, prefill and decode means split its time to first token "
         "and its E2E into waiting, computing the prompt and generating. The window is the "
         "scrapes', so a request at a point's edge may be counted in its neighbour "
         "(docs/telemetry.md).")


def _pair(p: LatencyPair, digits: int = 2) -> str:
    if p.client_ms is None and p.server_ms is None:
        return NOT_MEASURED
    return f"{num(p.client_ms, digits)} / {num(p.server_ms, digits)}"


def _share(v: float | None) -> str:
    return NOT_MEASURED if v is None else f"{v:.1%}"


def _row(target: str, label: str, s: ServerLatency) -> list[str]:
    return [target, label, _pair(s.ttft), num(s.ttft.outside_ms, 2), _pair(s.e2e),
            num(s.e2e.outside_ms, 2), _pair(s.tpot, 3), _pair(s.itl, 3), num(s.queue_ms, 2),
            num(s.prefill_ms, 2), num(s.decode_ms, 2), num(s.tokens_per_step, 2),
            _share(s.cached_prompt_share)]


def rows(result: RunResult) -> list[list[str]]:
    """One row per point whose server published latency histograms (none: no table)."""
    out = []
    for t in result.targets:
        if t.telemetry is None:
            continue
        out += [_row(t.name, p.label, p.server_latency) for p in t.telemetry.points
                if p.server_latency is not None]
    return out


def console_lines(result: RunResult) -> list[str]:
    """One line per point for the terminal: TTFT and E2E, client against server."""
    out = []
    for t in result.targets:
        if t.telemetry is None:
            continue
        for p in t.telemetry.points:
            s = p.server_latency
            if s is None:
                continue
            out.append(
                f"server-side {t.name}/{p.label}: TTFT {_pair(s.ttft)} ms (client / server; "
                f"outside {num(s.ttft.outside_ms, 2)}), E2E {_pair(s.e2e)} ms (outside "
                f"{num(s.e2e.outside_ms, 2)}), TPOT {_pair(s.tpot, 3)} ms, queue "
                f"{num(s.queue_ms, 2)} / prefill {num(s.prefill_ms, 2)} / decode "
                f"{num(s.decode_ms, 2)} ms")
    return out


__all__ = ["HEAD", "INTRO", "console_lines", "rows"]
