"""The ``Probe`` protocol, the ``Sample`` row, and the background sampler that streams samples
to ``samples.parquet`` in the run folder.

A probe reads one side channel (power, energy counters, CPU time, device utilization). Times
are ``perf_counter_ns()`` minus the run anchor ``t0_ns``, like records. Energy is reported as
a cumulative ``energy_j`` since the probe started, per device, so any window's energy is a
difference (:mod:`acceval.probes.window`). A probe that cannot read says so through
``available()`` and emits nothing: a missing reading is never reported as 0.

Samples are written like records (``results/store.py``): small Parquet parts written to a
temporary name and renamed, so a killed run leaves only complete parts; ``finalize`` compacts.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Protocol, runtime_checkable

import pyarrow as pa

from acceval.results.store import compact_parts, read_stream, write_part

SAMPLES_FILE = "samples.parquet"
PARTS_DIR = "samples.parts"


@dataclass(slots=True)
class Sample:
    t_ns: int              # perf_counter_ns() - t0_ns
    probe: str             # probe name, e.g. nvml
    metric: str            # energy_j, power_w, cpu_s, memory_used_bytes, ...
    value: float
    unit: str              # J, W, s, bytes, %, FLOP/s
    device: str = ""       # gpu0, package-0, neuron3, pid:1234 ...
    estimated: bool = False  # True when derived from a declared figure, not read


SAMPLE_SCHEMA = pa.schema([
    ("t_ns", pa.int64()), ("probe", pa.string()), ("metric", pa.string()),
    ("value", pa.float64()), ("unit", pa.string()), ("device", pa.string()),
    ("estimated", pa.bool_()),
])
_NAMES = [f.name for f in fields(Sample)]
assert SAMPLE_SCHEMA.names == _NAMES, "Sample and SAMPLE_SCHEMA must list the same columns"


@runtime_checkable
class Probe(Protocol):
    """A side channel sampled during a run."""

    name: str

    def available(self) -> tuple[bool, str]:
        """Whether this probe can read here, and why not (a one-line reason)."""
        ...

    def start(self, t0_ns: int) -> None:
        """Open the source and take the baseline; ``t0_ns`` is the run anchor."""
        ...

    def sample(self) -> list[Sample]:
        """Read now. Returns no sample for a value it could not read."""
        ...

    def stop(self) -> list[Sample]:
        """A last reading, then release the source."""
        ...


def rel_ns(t0_ns: int) -> int:
    return time.perf_counter_ns() - t0_ns


def samples_to_table(samples: Sequence[Sample]) -> pa.Table:
    cols = {n: [getattr(s, n) for s in samples] for n in _NAMES}
    return pa.Table.from_pydict(cols, schema=SAMPLE_SCHEMA)


def table_to_samples(table: pa.Table) -> list[Sample]:
    return [Sample(**row) for row in table.to_pylist()]


class SampleWriter:
    """Crash-safe streaming of samples into ``samples.parts/``; ``finalize`` compacts them."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = Path(run_dir)
        self.parts = self.run_dir / PARTS_DIR
        self.parts.mkdir(parents=True, exist_ok=True)
        self._n = len(list(self.parts.glob("part-*.parquet")))
        # Several samplers may write at once (targets measured in parallel): each names its
        # parts with its own token.
        self._token = secrets.token_hex(4)
        self.written = 0

    def write(self, samples: Sequence[Sample]) -> None:
        if not samples:
            return
        self._n += 1
        write_part(samples_to_table(samples),
                   self.parts / f"part-{self._n:06d}-{self._token}.parquet")
        self.written += len(samples)

    def finalize(self) -> Path:
        return compact_parts(self.run_dir, SAMPLES_FILE, PARTS_DIR, SAMPLE_SCHEMA)


def compact_samples(run_dir: Path) -> str | None:
    """Merge the samples' parts into samples.parquet (after samplers stopped with
    ``compact=False``); the problem, if it could not."""
    if not (Path(run_dir) / PARTS_DIR).is_dir():
        return None
    try:
        compact_parts(Path(run_dir), SAMPLES_FILE, PARTS_DIR, SAMPLE_SCHEMA)
    except OSError as exc:  # the parts stay readable
        return f"samples not compacted: {exc}"
    return None


def read_samples(run_dir: str | Path) -> pa.Table:
    """The samples of a run, finished (samples.parquet) or interrupted (parts only)."""
    return read_stream(run_dir, SAMPLES_FILE, PARTS_DIR, SAMPLE_SCHEMA)


class ProbeSampler:
    """Runs probes in a background thread every ``interval_s`` and streams their samples.

    Probes that are not available are skipped and listed in ``unavailable`` with the reason;
    a probe that fails while sampling is dropped and its error kept in ``errors``.
    """

    def __init__(self, probes: Sequence[Probe], run_dir: Path, *, t0_ns: int,
                 interval_s: float = 1.0, flush_s: float = 1.0) -> None:
        if interval_s <= 0:
            raise ValueError("interval_s must be > 0")
        self.probes = list(probes)
        self.t0_ns = t0_ns
        self.interval_s = interval_s
        self.flush_s = flush_s
        self.writer = SampleWriter(run_dir)
        self.unavailable: dict[str, str] = {}
        self.errors: dict[str, str] = {}
        self._active: list[Probe] = []
        self._buf: list[Sample] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        for p in self.probes:
            ok, why = p.available()
            if not ok:
                self.unavailable[p.name] = why
                continue
            try:
                p.start(self.t0_ns)
            except Exception as exc:  # a probe must never break the run
                self.unavailable[p.name] = f"start failed: {exc}"
                continue
            self._active.append(p)
        self._collect()
        self._thread = threading.Thread(target=self._loop, name="acceval-probes", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        last_flush = time.monotonic()
        while not self._stop.wait(self.interval_s):
            self._collect()
            if time.monotonic() - last_flush >= self.flush_s:
                self._flush()
                last_flush = time.monotonic()

    def _collect(self, final: bool = False) -> None:
        for p in list(self._active):
            try:
                got = p.stop() if final else p.sample()
            except Exception as exc:  # drop the probe, keep the run
                self.errors[p.name] = str(exc) or type(exc).__name__
                self._active.remove(p)
                continue
            with self._lock:
                self._buf.extend(got)

    def _flush(self) -> None:
        with self._lock:
            buf, self._buf = self._buf, []
        try:
            self.writer.write(buf)
        except OSError as exc:  # a full disk: keep them for the next try, keep sampling
            with self._lock:
                self._buf[:0] = buf
            self.errors["samples"] = f"samples not written: {exc}"

    def stop(self, *, compact: bool = True) -> Path:
        """Stop sampling, take each probe's last reading, and write samples.parquet
        (``compact=False``: leave the parts, for samplers still writing beside this one;
        :func:`compact_samples` merges them once all are done)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self._collect(final=True)
        self._flush()
        if not compact:
            return self.writer.parts
        try:
            return self.writer.finalize()
        except OSError as exc:  # the parts written so far stay readable
            self.errors["samples"] = f"samples not compacted: {exc}"
            return self.writer.parts

    def __enter__(self) -> ProbeSampler:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
