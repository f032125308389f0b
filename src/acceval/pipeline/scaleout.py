"""The scale-out wiring of a run (``execution.backend: ray``): the Ray cluster joined for the
run and left after it, and several targets measured at the same time from their own load
generators. The backend itself is :mod:`acceval.scaleout`; this module only plugs it in."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pyarrow as pa

from acceval.errors import AccevalError, StudyError
from acceval.pipeline.target_run import RunTasks, Scorer, measured, prepare, run_async
from acceval.probes.base import compact_samples
from acceval.results.runlog import ExecutionLog, RunLog, TargetLog
from acceval.scaleout.ray_backend import connected
from acceval.study import Study
from acceval.study import Target as TargetSpec


def measure_together(study: Study, todo: list[tuple[int, TargetSpec, TargetLog]], *,
                     tasks: RunTasks, run_dir: Path, base_dir: Path, scorer: Scorer,
                     t0_ns: int, checkpoint: Callable[[], None],
                     kept_rows: dict[str, pa.Table]) -> None:
    """Several targets at the same time (execution.backend ray): each is prepared here in
    turn, then all are measured on one event loop, their load sent by their own load
    generators; this loop only receives their records. No live progress line (several
    points run at once)."""
    with ExitStack() as stack:
        prepared = []
        for t_index, tspec, tlog in todo:
            try:
                prepared.append(prepare(study, tspec, t_index, tlog, stack, tasks=tasks,
                                        run_dir=run_dir, base_dir=base_dir, scorer=scorer,
                                        t0_ns=t0_ns, prog=None, checkpoint=checkpoint,
                                        kept_rows=kept_rows.get(tspec.name),
                                        together=True))
            except StudyError:
                raise
            except AccevalError as exc:
                tlog.failure = str(exc)

        async def together() -> None:
            await asyncio.gather(*[measured(p) for p in prepared])

        run_async(together())
    problem = compact_samples(run_dir)  # every sampler has stopped
    if problem is not None:
        todo[0][2].probe_notes["samples"] = problem


@contextmanager
def execution_backend(study: Study, log: RunLog) -> Iterator[None]:
    """The Ray cluster a ``backend: ray`` run sends from, joined (or started) for the run and
    left after it; nothing for the local backend."""
    ex = study.execution
    if ex.backend == "local":
        yield
        return
    clients = sum(ex.clients_for(t.name) for t in study.targets)
    with connected(ex, clients=clients) as cluster:
        log.execution = ExecutionLog(backend=ex.backend, address=ex.address,
                                     ray_version=cluster.ray_version, nodes=cluster.nodes,
                                     parallel_targets=False)
        yield
