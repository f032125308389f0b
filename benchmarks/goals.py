"""What a client-benchmark run must satisfy to be tabled, and the goals it is measured against.

Two kinds of verdict, kept apart:

- **Rejection** (:func:`reject_reasons`): a run whose load window is too short, whose arrival
  rate at the server is off the rate it was asked for, or whose schedule cannot be true (a lag
  longer than the whole run: target times on another clock) measured something other than
  what its row would claim. It is printed with its reasons and kept in ``results.json``,
  never tabled. GuideLLM 0.8.1 once "ran 50 req/s" at 297 req/s with its target times at
  epoch 0, a lag of 1.8e12 ms; that row went into the table before these checks.
- **Goals** (:func:`evaluate`): issue 31's table, over the runs that were not rejected. A goal
  that is missed, or that the sitting was meant to measure and could not, makes the script
  exit non-zero (:data:`EXIT_GOAL_MISSED`), naming which.

Every threshold lives here, once.
"""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: A load window shorter than this is too short to hold a steady state (start-up and drain
#: are a large share of it); the quiet sitting's floor. ``--min-window`` lowers it for smoke runs.
MIN_WINDOW_S = 20.0
#: An open-loop run's arrival rate at the server must be within this fraction of the requested
#: rate. A Poisson schedule's own count over a 22 s window at 50 req/s has a 3 % spread, so
#: ±10 % rejects a true schedule about once in a thousand runs.
RATE_TOLERANCE = 0.10
#: Below this share of the server's complete responses joined to a client request, the
#: client's send stamps are not on this host's clock (or its file lists other requests).
MIN_JOINED_SHARE = 0.90
#: A median schedule lag below this (ms) means sends before their intended time: a schedule
#: on some other clock, not a fast client.
MIN_LAG_P50_MS = -1.0

#: Issue 31's goals for the client benchmark.
RATE_RATIO_GOAL = 10.0          # acceval's closed-loop max rate over the fastest peer's
LAG_P99_GOAL_MS = 1.0           # schedule-lag p99 at half acceval's max rate ...
LAG_OVER_FLOOR_MS = 0.3         # ... or within this of the host's timer floor p99
EXIT_GOAL_MISSED = 3            # the CLI's "a gate failed"

#: Issue 31's goals for the open loop (``openloop.py``) and the transports (``transports.py``).
EQUAL_LOAD_GOAL = 1.3           # open over closed loop CPU per request at equal load, at most
NATIVE_RATE_GOAL = 1.5          # native transport's rate over the small client's, at least
AIOHTTP_CPU_GOAL = 1.2          # aiohttp transport's CPU per request over the small client's


def reject_reasons(res: Mapping[str, Any], *, requested_rps: float | None,
                   min_window_s: float = MIN_WINDOW_S) -> list[str]:
    """Why this run must not be tabled (empty: it may be)."""
    reasons = []
    if res.get("exit"):
        reasons.append(f"the client exited with {res['exit']}")
    window = res.get("window_s")
    if not res.get("server_ok") or not window:
        return [*reasons, "the server completed no request"]
    if window < min_window_s:
        reasons.append(f"load window {window:.1f} s is shorter than {min_window_s:g} s")
    # The arrival rate the server saw, not completions over the window, which hold the last
    # request's latency too (365 ms in `paced`: -11 % on a 3 s run at the exact rate).
    rate = res.get("offered_rps", res.get("rate_rps"))
    if requested_rps and rate is not None and abs(rate / requested_rps - 1) > RATE_TOLERANCE:
        reasons.append(f"requests arrived at {rate:.1f} req/s against the requested "
                       f"{requested_rps:g} ({rate / requested_rps - 1:+.0%}; tolerance "
                       f"±{RATE_TOLERANCE:.0%})")
    reasons += _schedule_reasons(res, window)
    joined = res.get("joined") or 0
    if joined < MIN_JOINED_SHARE * res["server_ok"]:
        reasons.append(f"only {joined} of the server's {res['server_ok']} complete responses "
                       f"joined a client request (at least {MIN_JOINED_SHARE:.0%}): the "
                       "client's send stamps are not on this host's clock")
    return reasons


def _schedule_reasons(res: Mapping[str, Any], window_s: float) -> list[str]:
    out = []
    for key in ("lag_p50_ms", "lag_p99_ms"):
        lag = res.get(key)
        if lag is not None and abs(lag) > window_s * 1e3:
            out.append(f"schedule lag {key[4:7]} {lag:.4g} ms is longer than the whole load "
                       f"window ({window_s:.1f} s): the tool's intended send times are not "
                       "on this run's clock")
    p50 = res.get("lag_p50_ms")
    if p50 is not None and p50 < MIN_LAG_P50_MS and abs(p50) <= window_s * 1e3:
        out.append(f"schedule lag p50 {p50:.3f} ms: requests sent before their intended time")
    return out


@dataclass(frozen=True, slots=True)
class Goal:
    """One row of issue 31's table as this sitting measured it."""

    name: str
    goal: str
    measured: str
    met: bool


@dataclass(frozen=True, slots=True)
class Cores:
    """The CPUs each side had, stated beside every ratio that the machine may bind."""

    host_cpus: int
    server: str            # taskset list, or "any"
    server_workers: int
    acceval: str
    acceval_clients: str   # the client-process counts measured, "1,8"
    peers: str

    def describe(self) -> str:
        return (f"host {self.host_cpus} CPUs; mock: {self.server_workers} worker(s) on CPUs "
                f"{self.server}; acceval: {self.acceval_clients} client process(es) on CPUs "
                f"{self.acceval}; peers on CPUs {self.peers}")


def median(xs: Iterable[float | None]) -> float | None:
    vals = [x for x in xs if x is not None]
    return statistics.median(vals) if vals else None


def _closed_rate(rows: Sequence[Mapping[str, Any]], tool: str) -> float | None:
    return median(r.get("rate_rps") for r in rows if r["tool"] == tool and r["mode"] == "closed")


def rate_goal(setting: str, rows: Sequence[Mapping[str, Any]], ours: Sequence[str],
              peers: Sequence[str], cores: Cores, reference_rps: float | None = None
              ) -> Goal | None:
    """acceval's best closed-loop rate (over its transports and client counts) against the
    fastest peer's, both medians over accepted rounds. Without peers in this sitting, against
    ``reference_rps`` (the fastest peer's rate from another sitting, said as such), else None.
    The mock's CPU during acceval's runs is stated: near its cores' count, the machine binds."""
    if not peers and reference_rps is None:
        return None
    name = f"{setting}: acceval / fastest peer, closed-loop max rate"
    goal = f">= {RATE_RATIO_GOAL:g}x"
    ok = [r for r in rows if r["setting"] == setting and not r.get("rejected")]
    missing = [t for t in [*ours, *peers] if _closed_rate(ok, t) is None]
    if missing:
        return Goal(name, goal, f"not measured: no accepted closed-loop run of "
                    f"{', '.join(missing)} ({cores.describe()})", False)
    best = max(ours, key=lambda t: _closed_rate(ok, t) or 0.0)
    a = _closed_rate(ok, best)
    assert a is not None
    if peers:
        fastest = max(peers, key=lambda t: _closed_rate(ok, t) or 0.0)
        b = _closed_rate(ok, fastest)
        assert b is not None
        against = f"{fastest} {b:,.0f} req/s"
    else:
        assert reference_rps is not None
        b = reference_rps
        against = f"the reference {b:,.0f} req/s (a peer measured in another sitting)"
    best_rows = [r for r in ok if r["tool"] == best and r["mode"] == "closed"]
    util = median(r.get("server_cpu_util") for r in best_rows)
    cores = dataclasses.replace(cores, acceval_clients=str(best_rows[0].get("clients", 1)))
    mock = "" if util is None else f"; the mock used {util:.2f} cores"
    return Goal(name, goal, f"{best} {a:,.0f} req/s vs {against}, {a / b:.1f}x "
                f"({cores.describe()}{mock})", a / b >= RATE_RATIO_GOAL)


def lag_goal(setting: str, rows: Sequence[Mapping[str, Any]], tool: str,
             floor_p99_ms: float | None) -> Goal | None:
    """Schedule-lag p99 of ``tool``'s half-max points against 1 ms or the host's floor: the
    median over the runs tabled (one bad second on a 2-core host moves one run's p99 by a
    millisecond; every run's figure is listed)."""
    half = [r for r in rows if r["setting"] == setting and r["tool"] == tool
            and r["mode"] == "half-max"]
    if not half:
        return None
    name = f"{setting}: {tool} schedule-lag p99 at half its max rate"
    goal = f"< {LAG_P99_GOAL_MS:g} ms, or within {LAG_OVER_FLOOR_MS:g} ms of the host's floor"
    tabled = [r for r in half if not r.get("rejected") and r.get("lag_p99_ms") is not None]
    if not tabled:
        why = "; ".join(w for r in half for w in (r.get("rejected") or ["no lag recorded"]))
        return Goal(name, goal, f"not measured: {why}", False)
    lags = [float(r["lag_p99_ms"]) for r in tabled]
    lag = statistics.median(lags)
    floor = "floor not measured" if floor_p99_ms is None else f"floor p99 {floor_p99_ms:.3f} ms"
    runs = "" if len(lags) == 1 else (
        f"median of {len(lags)} runs: {', '.join(f'{x:.3f}' for x in lags)}; ")
    left_out = len(half) - len(tabled)
    rejected = f"; {left_out} run(s) rejected" if left_out else ""
    met = lag < LAG_P99_GOAL_MS or (floor_p99_ms is not None
                                    and lag <= floor_p99_ms + LAG_OVER_FLOOR_MS)
    return Goal(name, goal, f"{lag:.3f} ms at {tabled[-1]['rate_target_rps']:g} req/s "
                f"({runs}{floor}{rejected})", met)


def lag_crossing(rows: Sequence[Mapping[str, Any]], bar_ms: float = LAG_P99_GOAL_MS
                 ) -> tuple[float | None, float | None]:
    """Where an open loop's schedule lag first crosses ``bar_ms`` over a ramp of rates (the
    rows of one tool and setting, any order): the highest rate whose p99, and every lower
    rate's, stayed under the bar, and the lowest rate whose p99 did not. A rejected run (its
    rate or schedule off what was asked) or one with no lag did not hold the schedule."""
    ramp = sorted((float(r["rate_target_rps"]),
                   float("inf") if r.get("rejected") or r.get("lag_p99_ms") is None
                   else float(r["lag_p99_ms"])) for r in rows)
    under = over = None
    for rate, lag in ramp:
        if lag >= bar_ms:
            over = rate
            break
        under = rate
    return under, over


def floor_key(setting: str, tool: str) -> str:
    """The timer floor measured before ``tool``'s half-max point in ``setting``."""
    return f"{setting} {tool}"


def evaluate(rows: Sequence[Mapping[str, Any]], *, settings: Sequence[str],
             ours: Sequence[str], peers: Sequence[str], cores: Cores,
             floors_p99_ms: Mapping[str, float | None],
             reference_rps: Mapping[str, float] | None = None) -> list[Goal]:
    goals: list[Goal | None] = []
    for s in settings:
        goals.append(rate_goal(s, rows, ours, peers, cores, (reference_rps or {}).get(s)))
        goals += [lag_goal(s, rows, t, floors_p99_ms.get(floor_key(s, t))) for t in ours]
    return [g for g in goals if g is not None]


def summary(goals: Sequence[Goal]) -> list[str]:
    """Markdown lines: every goal with MET or MISSED."""
    return [f"- **{'MET' if g.met else 'MISSED'}** {g.name}: {g.measured} (goal {g.goal})"
            for g in goals]
