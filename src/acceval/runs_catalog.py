"""The DuckDB catalog of runs: ``<runs dir>/catalog.duckdb`` indexes every run folder so that
SQL and ``acceval compare`` work across runs.

Two tables are stored: ``run_index`` (one row per run) and ``point_index`` (one row per target
and load point, the summary columns). Queries see three views: ``runs``, ``points`` and
``records``; ``records`` reads every run's Parquet files directly (``read_parquet`` with
``union_by_name``), so it is never copied into the catalog and never goes stale.
The catalog is derived data: deleting it loses nothing, ``refresh`` rebuilds it.
"""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from acceval.economics.apply import TargetEconomics
from acceval.errors import AccevalError, UsageError
from acceval.results.records import RECORD_SCHEMA
from acceval.results.store import PARTS_DIR, RECORDS_FILE, readable, stream_sources
from acceval.run_result import RESULT_FILE, RunResult

CATALOG_FILE = "catalog.duckdb"

_RUN_COLUMNS = """
    run_id VARCHAR PRIMARY KEY, study VARCHAR, created_utc VARCHAR, finished_utc VARCHAR,
    path VARCHAR, targets VARCHAR[], interrupted BOOLEAN, schema_version INTEGER,
    result_mtime DOUBLE, warnings INTEGER
"""
_POINT_COLUMNS: tuple[tuple[str, str], ...] = (
    ("run_id", "VARCHAR"), ("target", "VARCHAR"), ("load_index", "INTEGER"),
    ("load_label", "VARCHAR"), ("kind", "VARCHAR"), ("level", "DOUBLE"),
    ("requests", "INTEGER"), ("ok", "INTEGER"), ("errors", "INTEGER"),
    ("error_rate", "DOUBLE"), ("duration_s", "DOUBLE"), ("request_throughput_rps", "DOUBLE"),
    ("output_token_throughput_tps", "DOUBLE"),
    ("ttft_p50_ms", "DOUBLE"), ("ttft_p95_ms", "DOUBLE"), ("ttft_p99_ms", "DOUBLE"),
    ("tpot_p50_ms", "DOUBLE"), ("tpot_p95_ms", "DOUBLE"), ("tpot_p99_ms", "DOUBLE"),
    ("e2e_p95_ms", "DOUBLE"), ("goodput_rps", "DOUBLE"), ("correct_goodput_rps", "DOUBLE"),
    ("accuracy", "DOUBLE"), ("accuracy_ci_low", "DOUBLE"), ("accuracy_ci_high", "DOUBLE"),
    ("meets_slo", "BOOLEAN"), ("degraded", "BOOLEAN"), ("schedule_lag_p99_ms", "DOUBLE"),
    ("cost_per_correct_usd", "DOUBLE"), ("gate_passed", "BOOLEAN"),
)
_SQL_TYPES = {pa.string(): "VARCHAR", pa.int32(): "INTEGER", pa.int64(): "BIGINT",
              pa.float64(): "DOUBLE", pa.bool_(): "BOOLEAN", pa.list_(pa.int64()): "BIGINT[]"}


def catalog_path(runs_dir: Path) -> Path:
    return Path(runs_dir) / CATALOG_FILE


@contextlib.contextmanager
def connect(runs_dir: Path, *, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection to the catalog with the tables created and the views defined."""
    path = catalog_path(runs_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        con = duckdb.connect(str(path), read_only=read_only and path.exists())
    except duckdb.IOException as exc:
        raise AccevalError(f"{path}: cannot open the runs catalog ({exc}); is another "
                           "acceval writing to it?") from None
    try:
        cols = ", ".join(f"{n} {t}" for n, t in _POINT_COLUMNS)
        if not read_only:
            con.execute(f"CREATE TABLE IF NOT EXISTS run_index ({_RUN_COLUMNS})")
            con.execute(f"CREATE TABLE IF NOT EXISTS point_index ({cols})")
        _define_views(con, Path(runs_dir))
        yield con
    finally:
        con.close()


def _record_files(runs_dir: Path) -> list[str]:
    runs = sorted({p.parent for p in runs_dir.glob(f"*/{RECORDS_FILE}")}
                  | {p.parent.parent for p in runs_dir.glob(f"*/{PARTS_DIR}/part-*.parquet")})
    # Each record once: a compacted file and the parts it does not cover (store.py).
    files = [f for run in runs for f in stream_sources(run, RECORDS_FILE, PARTS_DIR)]
    # One damaged file must not break SQL over every other run (report quarantines it).
    return [f.resolve().as_posix() for f in files if readable(f)]


def _sql_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def _define_views(con: duckdb.DuckDBPyConnection, runs_dir: Path) -> None:
    # Temporary views: absolute paths are resolved per session, so a moved runs folder works.
    con.execute("CREATE OR REPLACE TEMP VIEW runs AS SELECT * EXCLUDE (result_mtime) "
                "FROM run_index")
    con.execute("CREATE OR REPLACE TEMP VIEW points AS SELECT * FROM point_index")
    files = _record_files(runs_dir)
    if files:
        listing = "[" + ", ".join(_sql_str(f) for f in files) + "]"
        con.execute(
            "CREATE OR REPLACE TEMP VIEW records AS SELECT "
            r"regexp_extract(filename, '([^/]+)/(records\.parquet|records\.parts/[^/]+)$', 1)"
            f" AS run_id, * EXCLUDE (filename) FROM read_parquet({listing}, "
            "union_by_name = true, filename = true)")
    else:
        cols = ", ".join(f"CAST(NULL AS {_SQL_TYPES[f.type]}) AS {f.name}"
                         for f in RECORD_SCHEMA)
        con.execute("CREATE OR REPLACE TEMP VIEW records AS SELECT CAST(NULL AS VARCHAR) "
                    f"AS run_id, {cols} WHERE false")


def _num(v: Any) -> float | None:
    if v is None or isinstance(v, bool):
        return None
    f = float(v)
    return f if math.isfinite(f) else None


def _point_cost(economics: TargetEconomics | None, label: str) -> float | None:
    pc = economics.point(label) if economics is not None else None
    return _num(pc.bill.cost_per_correct_usd) if pc is not None else None


def point_rows(result: RunResult) -> list[tuple[Any, ...]]:
    """One row per target and load point, in ``_POINT_COLUMNS`` order."""
    rows = []
    for t in result.targets:
        for p in t.points:
            s = p.summary
            acc = s.accuracy
            rows.append((
                result.run_id, t.name, p.index, p.label, p.kind, p.level, s.requests, s.ok,
                s.errors, s.error_rate, s.duration_s, s.request_throughput_rps,
                s.output_token_throughput_tps, s.ttft_ms.p50, s.ttft_ms.p95, s.ttft_ms.p99,
                s.tpot_ms.p50, s.tpot_ms.p95, s.tpot_ms.p99, s.e2e_ms.p95, s.goodput_rps,
                s.correct_goodput_rps, acc.accuracy if acc else None,
                acc.ci_low if acc else None, acc.ci_high if acc else None, s.meets_slo,
                s.degraded, s.schedule_lag_ms.p99, _point_cost(t.economics, p.label),
                t.gate.passed,
            ))
    return rows


def index_run(run_dir: Path, *, runs_dir: Path | None = None) -> str:
    """Add or replace one run in the catalog of ``runs_dir`` (default: the run's parent).
    Returns the run id."""
    run_dir = Path(run_dir)
    if not (run_dir / RESULT_FILE).exists():
        raise UsageError(f"{run_dir}: no {RESULT_FILE}; is this a run folder?")
    with connect(runs_dir or run_dir.parent) as con:
        return _index(con, run_dir)


def _index(con: duckdb.DuckDBPyConnection, run_dir: Path) -> str:
    result = RunResult.load(run_dir)
    mtime = (run_dir / RESULT_FILE).stat().st_mtime
    con.execute("BEGIN")
    try:
        con.execute("DELETE FROM point_index WHERE run_id = ?", [result.run_id])
        con.execute("DELETE FROM run_index WHERE run_id = ?", [result.run_id])
        con.execute("INSERT INTO run_index VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", [
            result.run_id, result.study_name, result.created_utc, result.finished_utc,
            str(run_dir.resolve()), [t.name for t in result.targets], result.interrupted,
            result.schema_version, mtime, len(result.warnings)])
        rows = point_rows(result)
        if rows:
            marks = ", ".join("?" for _ in _POINT_COLUMNS)
            con.executemany(f"INSERT INTO point_index VALUES ({marks})", rows)
        con.execute("COMMIT")
    except Exception:
        con.execute("ROLLBACK")
        raise
    return result.run_id


def refresh(runs_dir: Path) -> list[str]:
    """Index every run folder under ``runs_dir`` whose result.json is new or changed, and drop
    runs whose folder is gone. Returns the run ids indexed now."""
    runs_dir = Path(runs_dir)
    if not runs_dir.is_dir():
        raise UsageError(f"{runs_dir}: no such folder of runs")
    done = []
    with connect(runs_dir) as con:
        known = {r[0]: (r[1], r[2]) for r in
                 con.execute("SELECT run_id, path, result_mtime FROM run_index").fetchall()}
        present = set()
        for result_file in sorted(runs_dir.glob(f"*/{RESULT_FILE}")):
            run_dir = result_file.parent
            path, mtime = str(run_dir.resolve()), result_file.stat().st_mtime
            hit = [rid for rid, (p, m) in known.items() if p == path and m == mtime]
            if hit:
                present.update(hit)
                continue
            try:
                done.append(_index(con, run_dir))
                present.add(done[-1])
            except (ValueError, OSError):
                continue  # a half-written or foreign folder: not a run we can index
        for rid in set(known) - present:
            con.execute("DELETE FROM point_index WHERE run_id = ?", [rid])
            con.execute("DELETE FROM run_index WHERE run_id = ?", [rid])
        _define_views(con, runs_dir)
    return done


def list_runs(runs_dir: Path) -> list[dict[str, Any]]:
    """Every indexed run, newest first (after a refresh)."""
    refresh(runs_dir)
    with connect(runs_dir) as con:
        cur = con.execute("SELECT run_id, study, created_utc, targets, interrupted, path "
                          "FROM runs ORDER BY created_utc DESC, run_id")
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def query(runs_dir: Path, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Run ``sql`` over the views ``runs``, ``points`` and ``records`` (after a refresh)."""
    refresh(runs_dir)
    with connect(runs_dir) as con:
        try:
            cur = con.execute(sql)
        except duckdb.Error as exc:
            raise UsageError(f"query failed: {exc}") from None
        if cur.description is None:
            return [], []
        return [d[0] for d in cur.description], cur.fetchall()


def format_rows(columns: list[str], rows: list[tuple[Any, ...]], fmt: str = "table") -> str:
    """Plain-text table (or JSON lines) for the CLI."""
    if fmt == "json":
        return "\n".join(json.dumps(dict(zip(columns, r, strict=True)), default=str)
                         for r in rows)
    cells = [[_cell(v) for v in r] for r in rows]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in cells]
    return "\n".join(line.rstrip() for line in lines)


def _cell(v: Any) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, list):
        return ",".join(str(x) for x in v)
    return str(v)


__all__ = ["CATALOG_FILE", "catalog_path", "connect", "format_rows", "index_run", "list_runs",
           "point_rows", "query", "refresh"]
