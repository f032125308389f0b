"""Analysis benchmark: ``acceval report --recompute`` over a realistic 1,000,000-record run,
beside the floor DuckDB sets for the per-point statistics over the same Parquet file.

The run is a stored one (``tests/fixtures/demo-run`` by default: 3 targets, 7 load points
each with the demand replay and the interruption; or the run folder given) whose records are
replicated until there are ``--records`` of them, every row with stamps of its own
(:func:`own_stamps`: a copy that repeats its source's stamps compresses 14 times better than
a run does, and analyses faster), written as the run's writer lays them out. Then, each in a
fresh process, ``--repeats`` times, with the machine's load average before each run:

- ``duckdb``: the floor: DuckDB's per-point count, mean, std, min, max and p50..p99.9 (linear
  interpolation, as acceval's) of TTFT, E2E, TPOT, schedule lag and output tokens, over the
  records file; seconds of the query (start-up excluded), peak RSS of the process;
- ``analysis``: ``load_result(run, recompute=True)`` (every section, the verdict), seconds
  with start-up excluded (the figure set against DuckDB's), peak RSS; each side is run once
  on the small fixture run first, so that first-use costs fall outside both windows;
- ``json`` and ``html``: ``acceval report RUN --recompute --format json|html``, the whole
  command (imports included), wall seconds and peak RSS.

It prints each figure beside its goal (issue 31) and exits 1 when one is missed, saying which:

    python benchmarks/analyze.py                       # fixture -> 1M records, 3 repeats
    python benchmarks/analyze.py --source runs/X --records 200000 --repeats 1

Results go to ``benchmarks/out/analyze-<UTC>.json`` and are summarised in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

HERE = Path(__file__).resolve().parent
FIXTURE = HERE.parent / "tests" / "fixtures" / "demo-run"


def replicate(source: Path, dest: Path, n_records: int, seed: int = 31) -> int:
    """Copy ``source`` to ``dest`` with its records replicated to at least ``n_records``, every
    row with its own stamps (:func:`own_stamps`), laid out as the run's writer lays them."""
    from acceval.results.store import read_records, write_grouped

    shutil.copytree(source, dest, ignore=shutil.ignore_patterns("report*.html", "parts"))
    table = read_records(source)
    copies = max(1, -(-n_records // max(1, table.num_rows)))
    parts = []
    for k in range(copies):
        ids = pc.add(table["request_id"], pa.scalar(k * table.num_rows, pa.int64()))
        parts.append(table.set_column(table.schema.get_field_index("request_id"),
                                      "request_id", ids))
    big = pa.concat_tables(parts).slice(0, n_records).combine_chunks()
    # A run writes its points one after another: the copies of a point stay together.
    big = big.take(pc.sort_indices(big, sort_keys=[("target", "ascending"),
                                                   ("load_index", "ascending")]))
    big = own_stamps(big.combine_chunks(), np.random.default_rng(seed))
    write_grouped(big, dest / "records.parquet", "target")
    return big.num_rows


def own_stamps(table: pa.Table, rng: np.random.Generator) -> pa.Table:
    """The rows with stamps of their own, as a real run's are: each row moved by up to 1 ms,
    and each chunk gap after its first chunk stretched by up to 20 us, order kept (scheduled
    <= sent <= first byte <= first token = first chunk <= ... <= finish <= done). Copies that
    repeat their source's stamps compress 14 times better than a run does and analyse faster."""
    n = table.num_rows
    shift = rng.integers(0, 1_000_000, n, dtype=np.int64)
    chunks = table["chunk_ns"].combine_chunks()
    flat = pc.list_flatten(chunks).to_numpy(zero_copy_only=False).astype(np.int64)
    rows = pc.list_parent_indices(chunks).to_numpy(zero_copy_only=False)
    lengths = pc.fill_null(pc.list_value_length(chunks), 0).to_numpy(zero_copy_only=False)
    starts = np.cumsum(lengths) - lengths
    stretch = rng.integers(0, 20_000, flat.size, dtype=np.int64)
    stretch[starts[lengths > 0]] = 0                    # the first chunk is the first token
    total = np.cumsum(stretch)
    within = total - (total[starts] - stretch[starts])[rows] if flat.size else total
    last = np.zeros(n, np.int64)
    last[lengths > 0] = within[(starts + lengths - 1)[lengths > 0]]
    moved = pa.ListArray.from_arrays(chunks.offsets, pa.array(flat + shift[rows] + within),
                                     mask=chunks.is_null())
    table = table.set_column(table.schema.get_field_index("chunk_ns"), "chunk_ns", moved)
    for name, by in (("scheduled_ns", shift), ("sent_ns", shift), ("first_byte_ns", shift),
                     ("first_token_ns", shift), ("finish_ns", shift + last),
                     ("done_ns", shift + last)):
        col = pc.add(table[name], pa.array(by))
        table = table.set_column(table.schema.get_field_index(name), name, col)
    return table


#: The goals: (figure, limit). Seconds and MB (10**6 bytes) of the median of the repeats.
GOALS = {"json_s": 2.0, "json_mb": 400.0, "html_s": 4.0, "html_mb": 500.0,
         "analysis_over_duckdb": 5.0}

_DUCKDB_QUERY = """
WITH r AS (
  SELECT target, load_index,
         (first_token_ns - sent_ns) / 1e6 AS ttft_ms,
         (done_ns - sent_ns) / 1e6 AS e2e_ms,
         (sent_ns - scheduled_ns) / 1e6 AS lag_ms,
         CASE WHEN output_tokens > 1 AND len(chunk_ns) > 1
              THEN (chunk_ns[-1] - chunk_ns[1]) / 1e6 / (output_tokens - 1) END AS tpot_ms,
         output_tokens::DOUBLE AS tokens
  FROM read_parquet($path)
  WHERE NOT coalesce(warmup, false) AND error_kind IS NULL)
SELECT target, load_index, count(*) AS n,
       {stats}
FROM r GROUP BY target, load_index ORDER BY target, load_index
"""
_LEVELS = "[0.5, 0.9, 0.95, 0.99, 0.999]"


def duckdb_query() -> str:
    stats = ",\n       ".join(
        f"avg({c}), stddev_pop({c}), min({c}), max({c}), quantile_cont({c}, {_LEVELS})"
        for c in ("ttft_ms", "e2e_ms", "tpot_ms", "lag_ms", "tokens"))
    return _DUCKDB_QUERY.replace("{stats}", stats)


def stage(name: str, run_dir: Path) -> int:
    """One in-process stage (the parent times it); the rows it produced."""
    if name == "duckdb":
        import duckdb

        con = duckdb.connect()
        rows = con.execute(duckdb_query(), {"path": str(run_dir / "records.parquet")})
        return len(rows.fetchall())
    from acceval.analysis import load_result
    from acceval.results.store import returning_pool

    returning_pool()  # as `acceval report` does
    return len(load_result(run_dir, recompute=True).targets)


def _in_process(name: str, run_dir: Path) -> tuple[float, float, float]:
    """(seconds, CPU seconds, peak MiB) of ``stage(name)`` in a fresh process, its start-up
    excluded: the stage runs once on the small stored fixture run first, so that neither
    side's timed window holds first-use costs (acceval's packages load their parts on first
    use and its result sections build their validators then; DuckDB's first query loads its
    Parquet reader)."""
    imports = "import duckdb" if name == "duckdb" else "import acceval.analysis"
    code = (f"import sys, time; sys.path.insert(0, {str(HERE)!r}); import analyze; {imports}; "
            f"analyze.stage({name!r}, analyze.FIXTURE); "
            "t = time.perf_counter(); c = time.process_time(); "
            f"assert analyze.stage({name!r}, __import__('pathlib').Path({str(run_dir)!r})); "
            "print(time.perf_counter() - t); print(time.process_time() - c); "
            "print([l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1])")
    env = {**os.environ, "ARROW_DEFAULT_MEMORY_POOL":  # as `acceval report` sets it
           os.environ.get("ARROW_DEFAULT_MEMORY_POOL", "jemalloc")}
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True, env=env).stdout.strip().splitlines()
    # VmHWM: this process's peak resident set (ru_maxrss would carry the parent's over the fork).
    return float(out[-3]), float(out[-2]), int(out[-1]) / 1024.0  # KiB -> MiB


def _command(fmt: str, run_dir: Path, out: Path) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak MiB) of the whole ``acceval report --recompute``
    command."""
    argv = [sys.executable, "-m", "acceval", "report", str(run_dir), "--recompute",
            "--format", fmt, "--out", str(out)]
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {proc.stderr.read().decode()[-2000:]}"
                         if proc.stderr else f"{' '.join(argv)} failed")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0  # KiB on Linux


def _build(source: Path, run_dir: Path, n_records: int) -> int:
    """:func:`replicate` in a child process: this one stays small, so the peak RSS a child
    command reports (``ru_maxrss`` counts what a forked child inherited) is its own."""
    code = (f"import sys; sys.path.insert(0, {str(HERE)!r}); import analyze, pathlib; "
            f"print(analyze.replicate(pathlib.Path({str(source)!r}), "
            f"pathlib.Path({str(run_dir)!r}), {n_records}))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True).stdout
    return int(out.strip().splitlines()[-1])


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f}"


def measure(run_dir: Path, repeats: int, work: Path) -> dict[str, dict[str, list[float]]]:
    """Every figure, ``repeats`` times each, interleaved (a burst of load on the shared host
    then falls on every figure, not on one)."""
    rows: dict[str, dict[str, list[float]]] = {
        k: {"s": [], "cpu_s": [], "mib": [], "load1": []}
        for k in ("duckdb", "analysis", "json", "html")}
    for _ in range(repeats):
        for name in rows:
            load1 = os.getloadavg()[0]
            s, cpu, mib = (_in_process(name, run_dir) if name in ("duckdb", "analysis")
                           else _command(name, run_dir, work / f"report.{name}"))
            rows[name]["s"].append(round(s, 3))
            rows[name]["cpu_s"].append(round(cpu, 3))
            rows[name]["mib"].append(round(mib, 1))
            rows[name]["load1"].append(round(load1, 2))
            print(f"  {name:8s} {s:6.2f} s ({cpu:5.2f} CPU s) {mib:5.0f} MiB   "
                  f"({_load()} before)", flush=True)
    return rows


def verdict(rows: dict[str, dict[str, list[float]]]) -> tuple[dict[str, float], list[str]]:
    """The medians set against :data:`GOALS`, and the goals missed (one line each)."""
    med = {k: {m: statistics.median(v[m]) for m in ("s", "mib")} for k, v in rows.items()}
    mb = 1024 * 1024 / 1e6
    figures = {"json_s": med["json"]["s"], "json_mb": med["json"]["mib"] * mb,
               "html_s": med["html"]["s"], "html_mb": med["html"]["mib"] * mb,
               "analysis_over_duckdb": med["analysis"]["s"] / med["duckdb"]["s"]}
    missed = [f"{k} = {v:.3g}, goal <= {GOALS[k]:g}" for k, v in figures.items()
              if v > GOALS[k]]
    return figures, missed


def _bytecode_cached() -> None:
    """Each figure is a fresh process: with PYTHONDONTWRITEBYTECODE=1 (this project's machines
    set it) and a changed tree, every one would compile acceval from source again, 0.2-1 s
    that a user's installed copy does not pay. Compile the tree once and let the children
    keep their caches."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    import compileall

    compileall.compile_dir(str(Path(__file__).resolve().parents[1] / "src"), quiet=1)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--source", type=Path, default=FIXTURE,
                    help="a run folder (default: tests/fixtures/demo-run)")
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--keep", type=Path, help="also copy the big run folder here")
    args = ap.parse_args()
    _bytecode_cached()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        run_dir = work / "big"
        t0 = time.perf_counter()
        n = _build(args.source, run_dir, args.records)
        size_mb = (run_dir / "records.parquet").stat().st_size / 1e6
        print(f"{n:,} records, records.parquet {size_mb:.1f} MB, built in "
              f"{time.perf_counter() - t0:.1f} s; {os.cpu_count()} CPUs, {_load()}", flush=True)
        if args.keep is not None:
            shutil.copytree(run_dir, args.keep, dirs_exist_ok=True)
        rows = measure(run_dir, args.repeats, work)
    figures, missed = verdict(rows)
    for k, v in figures.items():
        print(f"{k:22s} {v:8.3g}   goal <= {GOALS[k]:g}   {'MISSED' if v > GOALS[k] else 'met'}")
    out = {"records": n, "records_mb": round(size_mb, 1), "repeats": args.repeats,
           "source": str(args.source), "stages": rows,
           "figures": {k: round(v, 3) for k, v in figures.items()}, "goals": GOALS,
           "missed": missed,
           "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
           "utc": dt.datetime.now(dt.UTC).isoformat()}
    dest = HERE / "out"
    dest.mkdir(exist_ok=True)
    path = dest / f"analyze-{dt.datetime.now(dt.UTC):%Y%m%dT%H%M%SZ}.json"
    path.write_text(json.dumps(out, indent=2), encoding="utf-8")
    print(f"written: {path}")
    if missed:
        print("goals missed: " + "; ".join(missed), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
