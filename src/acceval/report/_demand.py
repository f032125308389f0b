"""The load sweep, demand replay and interruption tables, defined once for every format
(docs/demand-and-faults.md): each function gives an intro sentence, a header and rows of
plain text, which Markdown and HTML escape their own way."""

from __future__ import annotations

from dataclasses import dataclass

from acceval.report._fmt import num, pct, yesno
from acceval.run_result import RunResult


@dataclass(frozen=True, slots=True)
class Block:
    """One table of the section: its heading, the sentence above it, header and rows."""

    heading: str
    intro: str
    head: list[str]
    rows: list[list[str]]


STOPS = {"untrusted": "could not go on: the load generator could not be trusted at the next "
                      "rate (a sweep whose first point is untrusted cannot start)",
         "no-data": "could not start: no trusted point to start from",
         "converged": "converged", "max_steps": "step limit", "max_s": "time limit",
         "no-slo": "no SLO bound to search for", "at-max-rate": "at sweep.max_rate_rps"}


def sweep(result: RunResult) -> Block | None:
    sweeps = [t for t in result.targets if t.sweep]
    if not sweeps:
        return None
    rows = []
    for t in sweeps:
        sw = t.sweep
        assert sw is not None
        lo, hi = sw.bracket_rps
        steps = ", ".join(f"{num(s.rate_rps)} {'✓' if s.meets_slo else '✗'}"
                          + ("" if s.trusted is not False else " (not trusted)")
                          for s in sw.steps)
        rows.append([t.name, str(sw.runs), steps or "none", f"{num(lo)} – {num(hi)}",
                     num(sw.max_rate.rate_rps), sw.max_rate.method,
                     STOPS.get(sw.stopped_by, sw.stopped_by)])
    return Block("Load sweep", "Bisection for the highest Poisson rate meeting the SLO, after "
                 "the fixed points, within the open-loop family; the rate interpolates in the "
                 "SLO ratio inside the last bracket.",
                 ["target", "runs", "rates tried (req/s, meets SLO)", "bracket req/s",
                  "max rate under SLO", "method", "stopped by"], rows)


def replay(result: RunResult) -> list[Block]:
    replays = [(t.name, t.replay) for t in result.targets if t.replay is not None]
    if not replays:
        return []
    r0 = replays[0][1]
    rows = [[name, str(r.sent), num(r.expected_requests_replayed),
             f"{num(r.chi2)} (dof {r.chi2_dof}, p {num(r.chi2_p)})", num(r.max_abs_z),
             pct(r.point.summary.error_rate), f"{r.hours_meeting_slo}/{r.hours_judged}",
             num(r.schedule_lag_p99_ms)] for name, r in replays]
    summary = Block("Demand replay",
                    f"The {r0.profile} profile compressed into {num(r0.compress_to_s)} s "
                    f"({num(r0.bucket_s)} s per hour, rates unchanged), sent as a seeded "
                    "non-homogeneous Poisson process. z is (sent − expected) / √expected per "
                    "hour.",
                    ["target", "sent", "expected", "chi-square", "max |z|", "errors",
                     "hours meeting SLO", "lag p99 ms"], rows)
    hours = []
    for h in r0.hours:
        cells = [str(h.hour), num(h.intended_rps)]
        for _, r in replays:
            th = r.hours[h.hour]
            cells.append(f"{num(th.achieved_rps)} ({yesno(th.meets_slo)})")
        hours.append(cells)
    by_hour = Block("Demand replay, hour by hour", "Each hour of the profile as replayed.",
                    ["hour", "profile req/s"]
                    + [f"{name} achieved req/s (meets SLO)" for name, _ in replays], hours)
    return [summary, by_hour]


def interruption(result: RunResult) -> Block | None:
    faults = [t for t in result.targets if t.interruption]
    if not faults:
        return None
    rows = []
    for t in faults:
        i = t.interruption
        assert i is not None
        kinds = ", ".join(f"{k}: {v}" for k, v in i.failed_by_kind.items())
        recovered = num(i.slo_recovered_s)
        if i.slo_recovered_s is None:
            recovered = "not within the point (it ended before the SLO held again)"
        rows.append([
            t.name, i.point_label, f"{i.action} at {num(i.at_s)} s for {num(i.down_s)} s",
            num(i.restart_s), num(i.outage_s),
            f"{i.failed_after_fault} of {i.requests} ({kinds or 'none'})", yesno(i.accounted),
            num(i.time_to_first_success_s), recovered, num(i.slo_violation_s),
            i.error or "none"])
    return Block("Interruption",
                 "Outage: from the fault until the restarted server answered its health "
                 "check. Recovered: the start of the first rolling window (of send time) from "
                 "which every later window meets the SLO; failed requests count as infinitely "
                 "slow.",
                 ["target", "point", "fault", "restart s", "outage s", "failed",
                  "all accounted", "first success s", "SLO recovered s", "SLO violated s",
                  "problem"], rows)


def blocks(result: RunResult) -> list[Block]:
    """Every table of the section, in reading order."""
    out = [b for b in (sweep(result),) if b is not None]
    out += replay(result)
    out += [b for b in (interruption(result),) if b is not None]
    return out
