"""Where the load came from (execution.backend ray), for the report's provenance."""

from __future__ import annotations

from acceval.run_result import RunResult

HEAD = ["target", "load generators", "hosts", "pids", "points sent by"]


def intro(result: RunResult) -> str | None:
    ex = result.log.execution
    if ex is None or ex.backend == "local":
        return None
    where = ex.address or "a private Ray on this host"
    alive = sum(1 for n in ex.nodes if n.alive)
    together = "; the targets were measured at the same time" if ex.parallel_targets else ""
    return (f"The load was sent by load-generator actors on Ray {ex.ray_version or '?'} "
            f"({where}, {alive} node(s)){together}. Each generator ran the same runner on its "
            "share of every point and streamed its raw records back; percentiles are over "
            "the merged records. Intervals come from one host's monotonic clock; each host's "
            "records are placed on the run's timeline through its own wall-clock anchor.")


def rows(result: RunResult) -> list[list[str]]:
    if intro(result) is None:
        return []
    out = []
    for t in result.log.targets:
        gens = t.load_generators
        if not gens:
            continue
        hosts = sorted({g.node_ip or g.host for g in gens})
        counts = sorted({int(p.seeds.get("load_generators", 1)) for p in t.points})
        out.append([t.name, str(len(gens)), ", ".join(hosts),
                    ", ".join(str(g.pid) for g in gens),
                    " / ".join(f"{c} generator(s)" for c in counts) or "—"])
    return out


__all__ = ["HEAD", "intro", "rows"]
