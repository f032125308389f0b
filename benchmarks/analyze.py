"""Analysis benchmark: ``analyze`` and each renderer over a 1,000,000-record run.

The run is a real one (the quick demo, or the run folder given) whose records are replicated
until there are ``--records`` of them: every copy keeps its load point and its stamps, so each
point holds proportionally more requests with the same shapes (texts, chunks, errors). Each
stage then runs in a fresh process, timed in that process with its peak resident
memory (``VmHWM``), three times, with the allocator the command line uses; the seconds are
the stage's own, imports excluded:

    python benchmarks/analyze.py                       # quick demo -> 1M records, all stages
    python benchmarks/analyze.py --source runs/X --records 200000

Stages: ``analyze`` (load_result with recompute: records and samples read, every section
computed), then ``json``, ``md`` and ``html`` (each renders the stored result; ``html`` also
reads the records for its charts and samples). Results go to ``benchmarks/out/analyze-<UTC>.json``
and are summarised in docs/benchmarks.md.
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
STAGES = ("analyze", "json", "md", "html")


def _demo_run(workdir: Path) -> Path:
    out = workdir / "demo"
    subprocess.run([sys.executable, "-m", "acceval", "demo", "--quick", "--out", str(out),
                    "--no-progress"], check=True, capture_output=True)
    (run,) = [p for p in out.iterdir() if p.is_dir()]
    return run


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
    big = own_stamps(pa.concat_tables(parts).slice(0, n_records).combine_chunks(),
                     np.random.default_rng(seed))
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


def stage(name: str, run_dir: Path) -> None:
    """One stage in this process (the parent times it)."""
    from acceval.analysis import load_result
    from acceval.report import render

    if name == "analyze":
        load_result(run_dir, recompute=True)
        return
    result = load_result(run_dir)
    fmt = {"md": "md", "json": "json", "html": "html"}[name]
    text = render(result, fmt, run_dir=run_dir) if fmt == "html" else render(result, fmt)
    assert text


def _time(name: str, run_dir: Path) -> tuple[float, float]:
    code = (f"import sys, time; sys.path.insert(0, {str(HERE)!r}); import analyze; "
            "import acceval.analysis, acceval.report.html; t = time.perf_counter(); "
            f"analyze.stage({name!r}, __import__('pathlib').Path({str(run_dir)!r})); "
            "print(time.perf_counter() - t); "
            "print([l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1])")
    env = {**os.environ, "ARROW_DEFAULT_MEMORY_POOL":
           os.environ.get("ARROW_DEFAULT_MEMORY_POOL", "system")}  # as the command line sets it
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True, env=env).stdout.strip().splitlines()
    # In-process seconds of the stage (imports excluded); VmHWM: this process's peak
    # resident set (ru_maxrss would carry the parent's over the fork).
    return float(out[-2]), int(out[-1]) / 1024.0  # KiB -> MiB


def _import_s() -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import acceval.analysis, acceval.report.html"],
                   check=True)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--source", type=Path, help="a run folder (default: run the quick demo)")
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--keep", type=Path, help="also copy the big run folder here")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        source = args.source or _demo_run(work)
        run_dir = work / "big"
        n = replicate(source, run_dir, args.records)
        from acceval.analysis import load_result

        # The stored result is re-analysed once so the renderers read the big run's numbers.
        load_result(run_dir, recompute=True).save(run_dir)
        if args.keep is not None:
            shutil.copytree(run_dir, args.keep, dirs_exist_ok=True)
        imports = statistics.median(_import_s() for _ in range(args.repeats))
        rows = {}
        for name in STAGES:
            runs = [_time(name, run_dir) for _ in range(args.repeats)]
            rows[name] = {"wall_s": [round(w, 3) for w, _ in runs],
                          "peak_mib": [round(m, 1) for _, m in runs]}
            print(f"{name:8s} stage s min/median/max "
                  f"{min(w for w, _ in runs):.2f}/{statistics.median(w for w, _ in runs):.2f}/"
                  f"{max(w for w, _ in runs):.2f}  peak MiB "
                  f"{statistics.median(m for _, m in runs):.0f}", flush=True)
        print(f"a fresh process importing acceval.analysis and acceval.report.html: "
              f"{imports:.2f} s (not in the stage figures)")
    out = {"records": n, "repeats": args.repeats, "import_s": round(imports, 3),
           "stages": rows, "machine": {"cpus": os.cpu_count(),
                                       "python": platform.python_version()},
           "utc": dt.datetime.now(dt.UTC).isoformat()}
    dest = HERE / "out"
    dest.mkdir(exist_ok=True)
    path = dest / f"analyze-{dt.datetime.now(dt.UTC):%Y%m%dT%H%M%SZ}.json"
    path.write_text(json.dumps(out, indent=2), encoding="utf-8")
    print(f"written: {path}")


if __name__ == "__main__":
    main()
