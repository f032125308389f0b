"""Load generators as Ray actors: the same ``run_point``, on other processes and hosts.

One :class:`RemoteClients` per target drives ``n`` load-generator actors, placed by the
study's ``execution.placement`` (Ray resources, node labels). For each point the driver
splits the load (:func:`acceval.scaleout.shard.split_point`), every actor runs its share with
the ordinary runner on its own event loop, and streams its **raw** records back as Arrow
tables every :data:`FLUSH_S` (a Ray streaming generator); the driver hands each record to the
run's single writer, exactly as the local runner does. Nothing is aggregated remotely, so
percentiles over the merged records are exact.

Clocks: every actor reads one wall-clock anchor (``time_ns``, ``perf_counter_ns``) when it
starts and maps the run's t0 onto its own monotonic clock through it. Intervals (TTFT, ITL,
E2E) come from one host's monotonic clock; only the placement of a host's records on the run's
timeline rests on the wall clocks agreeing (NTP: about a millisecond between hosts; the same
host: exact up to the two reads).

A load generator that dies (its process or its node) marks the point it was running
``client_lost``: the records it streamed are kept, and the target's remaining points are not
measured (:class:`ClientsLost`); the other targets go on.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import platform
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from acceval.errors import AccevalError
from acceval.loadgen.progress import Progress
from acceval.loadgen.protocol import Prompt
from acceval.loadgen.runner import PointRun, PointSpec, new_event_loop, run_point
from acceval.results.records import Record, prepare_conversion, records_to_table, table_to_records
from acceval.results.runlog import RayNode
from acceval.scaleout.shard import Shard, Streamed, merge_runs, split_point
from acceval.scaleout.spec import Execution, Placement
from acceval.targets.spec import Endpoint

#: How often a load generator sends what it has recorded (seconds). Each streamed table costs
#: the generator and the driver far more CPU than its size suggests: at 1000 req/s through one
#: generator, interleaved in one sitting, every 0.25 s cost a median 22 % more CPU per request
#: than the local runner and every 1 s 9 % (the driver's share 41-50 against 29-34 us a
#: request; docs/benchmarks.md). A generator that is lost loses at most this much of what it
#: measured; its point is marked incomplete either way.
FLUSH_S = 1.0
#: How far ahead the driver sets a point's common start, so every generator gets the call.
START_MARGIN_S = 0.3
INSTALL_HINT = "pip install 'acceval[ray]'"


class ClientsLost(AccevalError):
    """A target's load generator died; what it streamed is kept."""


def import_ray() -> Any:
    """The ``ray`` module, or a clear error saying what to install."""
    try:
        import ray
    except ImportError:
        raise AccevalError(f"execution.backend ray needs Ray, which is not installed: "
                           f"{INSTALL_HINT}") from None
    return ray


def _lost_errors(ray: Any) -> tuple[type[BaseException], ...]:
    names = ("RayActorError", "ActorDiedError", "ActorUnavailableError", "NodeDiedError",
             "ObjectLostError", "OwnerDiedError", "WorkerCrashedError")
    return tuple(getattr(ray.exceptions, n) for n in names if hasattr(ray.exceptions, n))


# --- the cluster ------------------------------------------------------------------------------

@dataclass
class Cluster:
    """The Ray cluster a run uses (joined, or started privately for it)."""

    address: str
    private: bool
    ray_version: str
    nodes: list[RayNode] = field(default_factory=list)


@contextmanager
def connected(execution: Execution, *, clients: int) -> Iterator[Cluster]:
    """Join ``execution.address``, or start a private Ray on this host when it has none
    (with CPUs for ``clients`` load generators), and leave it afterwards."""
    ray = import_ray()
    if ray.is_initialized():
        yield _describe(ray, private=False)
        return
    kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                              "configure_logging": False}
    if execution.address is None:
        # "local": a new Ray even when one already runs on this host or RAY_ADDRESS names
        # one (without it, ray.init joins that one, and refuses num_cpus there).
        kwargs.update(address="local", num_cpus=max(clients, os.cpu_count() or 1))
    else:
        reachable(execution.address)
        kwargs["address"] = execution.address
    notice = logging.getLogger("ray._private.authentication.authentication_token_setup")
    notice.addFilter(_token_enabled_notice)
    try:
        ray.init(**kwargs)
    # Ray raises a bare Exception when its node does not come up in time (an overloaded
    # host): named like the others rather than a traceback.
    except Exception as exc:
        where = execution.address or "a private Ray on this host"
        raise AccevalError(f"execution: could not start or join {where}: {exc}. Start the "
                           "cluster first (`ray start --head`, docs/scale-out.md) or check "
                           "execution.address") from None
    finally:
        notice.removeFilter(_token_enabled_notice)
    try:
        yield _describe(ray, private=execution.address is None)
    finally:
        ray.shutdown()


def _token_enabled_notice(record: logging.LogRecord) -> bool:
    """Drop Ray's notice that a private cluster it starts has token authentication on (a
    line on every ``--clients`` run, with nothing to do about it); its warning when
    authentication is off still shows."""
    return "Token authentication is enabled for this Ray cluster" not in record.getMessage()


def reachable(address: str, timeout_s: float = 3.0) -> None:
    """Raise a clear error when nothing listens at a HOST:PORT cluster address (Ray itself
    would retry for minutes); ``auto`` is left to Ray."""
    if address == "auto":
        return
    host, _, port = address.removeprefix("ray://").rpartition(":")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s).close()
    except OSError as exc:
        raise AccevalError(f"execution.address {address}: no Ray cluster answers there "
                           f"({exc.strerror or exc}). Start one with `ray start --head "
                           "--port PORT` (docs/scale-out.md), or leave address out for a "
                           "private Ray on this host") from None


def _describe(ray: Any, *, private: bool) -> Cluster:
    ctx = ray.get_runtime_context()
    nodes = [RayNode(node_id=n.get("NodeID"), address=n.get("NodeManagerAddress"),
                     alive=bool(n.get("Alive")), resources=n.get("Resources") or {},
                     labels={k: str(v) for k, v in (n.get("Labels") or {}).items()
                             if not k.startswith("ray.io/")})
             for n in ray.nodes()]
    return Cluster(address=str(getattr(ctx, "gcs_address", "") or ""), private=private,
                   ray_version=str(ray.__version__), nodes=nodes)


# --- the actor --------------------------------------------------------------------------------

class LoadGenerator:
    """One load-generator process (a Ray actor): a target client on its own event loop,
    running the points' shares it is given."""

    def __init__(self, name: str, endpoint: dict[str, Any], t0_wall_ns: int) -> None:
        from acceval.targets import make_target

        # The wall-clock anchor: two reads back to back map the run's t0 onto this host's
        # monotonic clock.
        self.anchor_perf_ns = time.perf_counter_ns()
        self.anchor_wall_ns = time.time_ns()
        self.t0_ns = self.anchor_perf_ns - (self.anchor_wall_ns - t0_wall_ns)
        self.loop = new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True,
                                       name="acceval-loadgen")
        self.thread.start()
        self.target = make_target(name, Endpoint.model_validate(endpoint))
        self._call(self.target.start())
        prepare_conversion()  # before any share runs: run() converts while the loop stamps

    def _call(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def info(self) -> dict[str, Any]:
        try:
            import ray
            node_ip = ray.util.get_node_ip_address()
            node_id = ray.get_runtime_context().get_node_id()
        except Exception:  # outside Ray (tests of the class itself)
            node_ip, node_id = None, None
        return {"host": socket.gethostname(), "node_ip": node_ip, "node_id": node_id,
                "pid": os.getpid(), "python": platform.python_version(),
                "anchor_wall_ns": self.anchor_wall_ns, "anchor_perf_ns": self.anchor_perf_ns}

    def run(self, shard: Shard, start_wall_ns: int, prompts: list[Prompt]) -> Iterator[Any]:
        """Run one share with its prompts (the point's, at ``shard.prompts``); yield Arrow
        tables of finished records as they come, then the generator's own run and its raw
        dispatch lags."""
        done: deque[Record] = deque()
        lags: list[int] = []
        cpu0 = time.process_time()
        start_at = self.anchor_perf_ns + (start_wall_ns - self.anchor_wall_ns)
        fut = asyncio.run_coroutine_threadsafe(
            run_point(self.target, prompts, shard.spec, done.append, t0_ns=self.t0_ns,
                      first_request_id=shard.first_request_id,
                      request_id_step=shard.request_id_step, schedule_ns=shard.schedule_ns,
                      start_at_ns=start_at, lags_out=lags),
            self.loop)
        while True:
            concurrent.futures.wait([fut], timeout=FLUSH_S)
            batch = [done.popleft() for _ in range(len(done))]
            if batch:
                yield records_to_table(batch)
            if fut.done():
                break
        rest = [done.popleft() for _ in range(len(done))]
        if rest:
            yield records_to_table(rest)
        yield {"run": fut.result(), "lags": lags, "cpu_s": time.process_time() - cpu0}

    def close(self) -> None:
        try:
            self._call(self.target.close())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)


# --- the driver's side ------------------------------------------------------------------------

@dataclass
class Lost:
    """A generator that did not finish its share: why, and what it streamed before."""

    why: str
    kept: Streamed


def wall_of(perf_ns: int) -> int:
    """The wall-clock time (``time_ns``) of a ``perf_counter_ns`` reading of this host."""
    return time.time_ns() - (time.perf_counter_ns() - perf_ns)


class RemoteClients:
    """A target's load generators on Ray, used by the scenarios in place of the local
    runner (:meth:`run_point` has its shape)."""

    def __init__(self, name: str, endpoint: Endpoint, *, clients: int, placement: Placement,
                 t0_ns: int) -> None:
        self.ray = import_ray()
        self.name = name
        self.endpoint = endpoint
        self.n = clients
        self.placement = placement
        self.t0_wall_ns = wall_of(t0_ns)
        self.actors: list[Any] = []
        self.info: list[dict[str, Any]] = []
        self.lost: str | None = None
        self.last_cpu_s: float | None = None   # the generators' CPU for the last point
        self._abandoned = False   # a point was left mid-way: its generators may still send
        self._lost_types = _lost_errors(self.ray)

    async def start(self) -> None:
        ray = self.ray
        # One call at a time (Ray's default): an actor that may run two (max_concurrency 2,
        # or async) costs ~12 ms of CPU a second even idle against ~3 ms, which is 10 us a
        # request at 1000 req/s. Nothing needs a second call while a point runs: a point
        # left mid-way ends its generators by killing them (close).
        opts: dict[str, Any] = {"num_cpus": self.placement.num_cpus, "max_restarts": 0}
        if self.placement.resources:
            opts["resources"] = dict(self.placement.resources)
        if self.placement.labels:
            opts["label_selector"] = dict(self.placement.labels)
        actor_cls = ray.remote(LoadGenerator).options(**opts)
        endpoint = self.endpoint.model_dump(mode="json")
        self.actors = [actor_cls.remote(self.name, endpoint, self.t0_wall_ns)
                       for _ in range(self.n)]
        try:
            self.info = list(await asyncio.wait_for(
                asyncio.gather(*[a.info.remote() for a in self.actors]), _PLACE_TIMEOUT_S))
        except TimeoutError:
            self.close()
            where = (f" resources {self.placement.resources}" if self.placement.resources
                     else "") + (f" labels {self.placement.labels}" if self.placement.labels
                                 else "")
            raise AccevalError(f"{self.name}: the cluster could not place {self.n} load "
                               f"generator(s) with {self.placement.num_cpus:g} CPU each"
                               f"{where} within {_PLACE_TIMEOUT_S:g} s; does a node have "
                               "them (`ray status`)?") from None
        except Exception as exc:
            self.close()
            raise AccevalError(f"{self.name}: a load generator could not start: "
                               f"{_cause(exc)}") from None

    async def run_point(self, spec: PointSpec, prompts: Sequence[Prompt],
                        sink: Callable[[Record], None], *, progress: Progress | None,
                        first_request_id: int, schedule_ns: Any = None) -> PointRun:
        if self.lost is not None:
            raise ClientsLost(self.lost)
        shards, seeds = split_point(spec, len(prompts), self.n,
                                    first_request_id=first_request_id, schedule_ns=schedule_ns,
                                    prompts=prompts)
        if progress is not None:
            progress.start_point(spec.label, None)
        start_wall = time.time_ns() + int(START_MARGIN_S * 1e9)
        try:
            outcomes = await asyncio.gather(*[
                self._drain(self.actors[s.client], s, start_wall,
                            [prompts[i] for i in s.prompts], sink, progress)
                for s in shards])
        except BaseException:   # interrupted, or one generator failed: the others go on
            self._abandoned = True
            raise
        finally:
            if progress is not None:
                progress.end_point()
        runs = [o for o in outcomes if isinstance(o, tuple)]
        lost = [o for o in outcomes if isinstance(o, Lost)]
        if lost:
            self.lost = (f"{self.name}: load generator(s) lost during point {spec.label!r} "
                         f"({'; '.join(x.why for x in lost)}); what they streamed is kept, "
                         "the point is incomplete and the target's later points were not "
                         "measured")
        if not runs:
            raise ClientsLost(self.lost or f"{self.name}: no load generator finished")
        lags = [x for _, lg, _ in runs for x in lg]
        self.last_cpu_s = sum(c for _, _, c in runs)
        # The point counts what the lost generators streamed, as the records keep it.
        return merge_runs(spec, [r for r, _, _ in runs], lags, seeds, lost=len(lost),
                          streamed=[x.kept for x in lost])

    async def _drain(self, actor: Any, shard: Shard, start_wall: int, prompts: list[Prompt],
                     sink: Callable[[Record], None],
                     progress: Progress | None) -> tuple[PointRun, list[int], float] | Lost:
        final: dict[str, Any] | None = None
        kept = Streamed()
        try:
            async for ref in actor.run.remote(shard, start_wall, prompts):
                value = await ref
                if isinstance(value, pa.Table):
                    for rec in table_to_records(value):
                        if progress is not None:
                            progress.record(rec)
                        kept.add(rec)
                        sink(rec)
                else:
                    final = value
        except self._lost_types as exc:
            host = self.info[shard.client].get("node_ip") if shard.client < len(
                self.info) else None
            return Lost(f"generator {shard.client} on {host or 'its node'}: {_cause(exc)}",
                        kept)
        except Exception as exc:
            raise AccevalError(f"{self.name}: load generator {shard.client} failed: "
                               f"{_cause(exc)}") from None
        if final is None:
            return Lost(f"generator {shard.client}: ended without its summary", kept)
        return final["run"], final["lags"], float(final["cpu_s"])

    def close(self) -> None:
        """Close the generators' connections, then end their processes. After a point left
        mid-way (Ctrl-C, a failed generator) they may still be sending, and a call would
        wait behind that point: they are ended at once."""
        ray = self.ray
        if not self._abandoned:
            with suppress(Exception):
                ray.wait([a.close.remote() for a in self.actors],
                         num_returns=len(self.actors), timeout=5.0)
        for a in self.actors:
            with suppress(Exception):
                ray.kill(a, no_restart=True)
        self.actors = []


_PLACE_TIMEOUT_S = 60.0


def _cause(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[-1] if text else type(exc).__name__)[:300]


__all__ = ["FLUSH_S", "ClientsLost", "Cluster", "LoadGenerator", "RemoteClients", "connected",
           "import_ray", "wall_of"]
