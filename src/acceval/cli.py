"""The ``acceval`` command line: thin commands over the library.

Domain errors become exit codes here and only here: 0 ok, 1 runtime failure, 2 usage or study
error, 3 a gate failed. A traceback is a bug.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Any

import click

from acceval._version import __version__
from acceval.errors import AccevalError, UsageError


def _parse_options(pairs: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"--option expects key=value, got '{pair}'")
        try:
            out[key] = json.loads(raw)
        except json.JSONDecodeError:
            out[key] = raw
    return out


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="acceval")
def main() -> None:
    """Compare AI accelerators by what a correct answer costs.

    Write a study file (targets, tasks, load, SLOs, quality level), then `acceval run` it.
    Exit codes: 0 ok, 1 runtime failure, 2 usage or study error, 3 a gate failed.
    """
    # Arrow's default pool keeps freed pages, so reading a large run a target at a time
    # would still peak high (1M records: 452 against 389 MB, docs/benchmarks.md). Arrow reads
    # this when it starts, so it is set before anything imports pyarrow; a user's choice wins.
    # ``report`` asks for jemalloc, whose freed pages go back at once (:func:`_report_pool`),
    # where pyarrow's wheels carry it (Linux, macOS).
    ctx = click.get_current_context()
    if "ARROW_DEFAULT_MEMORY_POOL" not in os.environ:
        ctx.meta[_OUR_POOL] = True
        returning = ctx.invoked_subcommand == "report" and sys.platform in ("linux", "darwin")
        os.environ["ARROW_DEFAULT_MEMORY_POOL"] = "jemalloc" if returning else "system"
    _raise_descriptor_limit()
    if ctx.obj == _OWN_PROCESS:
        # The command runs in a process of its own: pyarrow's pandas probe is not needed there.
        from acceval.results.records import arrow_without_pandas

        arrow_without_pandas()


_OWN_PROCESS = "acceval: the process is the command's own"
_OUR_POOL = "acceval.arrow_pool_is_ours"


def _report_pool() -> None:
    """Re-analysing a run reads and frees one target's columns after another; the system
    allocator keeps the freed pages, fragmented, and jemalloc without decay gives them back
    at once (1M records, ``report --recompute --format json``: 310 against 360-390 MB). Not
    during ``run``: there the records writer allocates while requests are in flight."""
    if click.get_current_context().meta.get(_OUR_POOL):
        from acceval.results.store import returning_pool

        returning_pool()


def _raise_descriptor_limit() -> None:
    """Open files up to the hard limit: a common soft limit of 1,024 is below the
    concurrency a load test asks for, and the hard limit is the user's own ceiling."""
    try:
        import resource
    except ImportError:
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        want = hard if hard != resource.RLIM_INFINITY else max(soft, 65536)
        # A platform that refuses keeps its limit: the checks before the load say what fits.
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))


@main.command()
@click.argument("study_file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="The folder `run --out` will write to (default: the study's output.dir).")
@click.option("--preflight", is_flag=True,
              help="Also ask every remote endpoint whether it answers and lists its model.")
def validate(study_file: Path, out_dir: Path | None, preflight: bool) -> None:
    """Check a study file and everything a run of it would find late: name every bad field
    with its path and a hint (task and demand files, catalog ids, engines and their options,
    the report extra, the output folder, and for an agents section that a headless Chromium
    starts). Nothing is sent to any target unless --preflight."""
    from acceval.checks import check_study, preflight_study

    study, notes = check_study(study_file, out_dir=out_dir)
    if preflight:
        preflight_study(study)
    click.echo(f"{study_file}: ok ({_contents(study)})")
    for note in notes:
        click.echo(f"  note: {note}")


def _contents(study: Any) -> str:
    """What a study measures, for ``validate``: its inference targets and load families, its
    agent targets and its training platforms (any may be absent)."""
    def n(count: int, one: str, many: str) -> str:
        return f"{count} {one if count == 1 else many}"

    parts = []
    if study.targets:
        parts.append(f"{n(len(study.targets), 'target', 'targets')}, "
                     f"{n(len(study.load), 'load family', 'load families')}")
        # How long the load may hold the endpoints: every point stops at its max_duration_s
        # at the latest (then drains), so this bounds the load points' time from above.
        points = len(study.targets) * sum(len(f.levels) * f.repeats for f in study.load)
        upper_s = len(study.targets) * sum(len(f.levels) * f.repeats * f.max_duration_s
                                           for f in study.load)
        if points:
            upper = (f"{upper_s / 3600:.1f} h" if upper_s >= 5400 else
                     f"{upper_s / 60:.0f} min" if upper_s >= 90 else f"{upper_s:.0f} s")
            parts.append(f"{n(points, 'load point', 'load points')}, at most {upper} of load "
                         "at their max_duration_s")
    else:
        parts.append("no inference targets")
    if study.agents is not None:
        parts.append(f"agents: {n(len(study.agents.targets), 'target', 'targets')}")
    if study.training is not None:
        parts.append(f"training: {n(len(study.training.platforms), 'platform', 'platforms')}")
    return "; ".join(parts)


@main.command()
@click.argument("study_file", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder for run folders (default: the study's output.dir, 'runs').")
@click.option("--resume", "resume_dir", default=None, metavar="RUN_DIR",
              type=click.Path(file_okay=False, exists=True, path_type=Path),
              help="Continue an interrupted or killed run in its folder: finished points are "
                   "kept, unfinished ones measured again (the study is the run's own).")
@click.option("--no-progress", is_flag=True, help="Do not show the live progress display.")
@click.option("--skip-preflight", is_flag=True,
              help="Do not ask remote endpoints for their models before the first point.")
@click.option("--ray", "ray_address", default=None, metavar="ADDRESS",
              help="Send the load from load generators on this Ray cluster (HOST:PORT, or "
                   "'auto' for the one `ray start` began here); overrides execution.address "
                   "and sets execution.backend ray (docs/scale-out.md).")
@click.option("--clients", type=click.IntRange(1, 256), default=None, metavar="N",
              help="Load-generator processes per target (execution.clients); above 1 without "
                   "--ray, a private Ray is started on this host.")
def run(study_file: Path | None, out_dir: Path | None, resume_dir: Path | None,
        no_progress: bool, skip_preflight: bool, ray_address: str | None,
        clients: int | None) -> None:
    """Run a study: measure every target and write runs/<id>/ with records and the result.

    Before any load is sent, the study is checked as `validate` checks it, and every remote
    endpoint must answer and list its model (exit 2 naming the target otherwise).
    `acceval run --resume RUN_DIR` continues a run that was stopped."""
    from acceval.pipeline import execute_file, resume
    from acceval.report.console import print_summary

    if resume_dir is not None:
        if ray_address is not None or clients is not None:
            raise UsageError("--resume runs the rest as the run's own study says; --ray and "
                             "--clients cannot change it (edit execution: in a new study)")
        if study_file is not None or out_dir is not None:
            raise UsageError("--resume continues a run with the study it was started with, in "
                             "its own folder: give RUN_DIR alone, without STUDY_FILE or --out")
        result, run_dir = resume(resume_dir, progress=not no_progress,
                                 preflight=not skip_preflight)
    elif study_file is None:
        raise UsageError("give a STUDY_FILE to run, or --resume RUN_DIR to continue a run")
    else:
        result, run_dir = execute_file(study_file, out_dir=out_dir, progress=not no_progress,
                                       preflight=not skip_preflight, ray_address=ray_address,
                                       clients=clients)
    print_summary(result, run_dir)
    result.raise_for_failures()
    result.raise_for_gates()


@main.command()
@click.option("--engine", default="mock", show_default=True,
              help="Engine to host: mock, ortgenai, numpy, transformers, or a plugin.")
@click.option("--model", default=None, help="Model for real engines, e.g. builtin:tiny.")
@click.option("--precision", default=None, help="Engine precision, e.g. fp32, int8, int4.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option("--port", default=8000, show_default=True, type=int, help="Port to bind.")
@click.option("--option", "options", multiple=True, metavar="KEY=VALUE",
              help="Engine option (repeatable), e.g. --option ttft_ms=50.")
@click.option("--log", "log_path", default=None, type=click.Path(dir_okay=False),
              help="Write the server's own per-request send times (JSON lines) here.")
@click.option("--served-model-name", default=None, help="Model name reported by /v1/models.")
@click.option("--idle-timeout", default=30.0, show_default=True, metavar="SECONDS",
              type=click.FloatRange(min=0, min_open=True),
              help="Close a connection that sends no request (or stalls its body) this long.")
@click.option("--head-timeout", default=10.0, show_default=True, metavar="SECONDS",
              type=click.FloatRange(min=0, min_open=True),
              help="Answer 408 and close when a request's head takes longer than this.")
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 64),
              metavar="N", help="Serve from N processes sharing the port (SO_REUSEPORT), so "
              "the server is never the bottleneck of a client benchmark; each has its own "
              "engine (and --log PATH writes PATH.workerK for the others).")
def serve(engine: str, model: str | None, precision: str | None, host: str, port: int,
          options: tuple[str, ...], log_path: str | None, served_model_name: str | None,
          idle_timeout: float, head_timeout: float, workers: int) -> None:
    """Serve a local engine behind an OpenAI-compatible API (loopback by default)."""
    from acceval.serve import serve_forever

    opts = _parse_options(options)
    if model is not None:
        opts["model"] = model
    if precision is not None:
        opts["precision"] = precision
    if workers > 1:
        from acceval.serve.__main__ import main as serve_main
        from acceval.serve._process import server_command

        argv = server_command(engine, options=opts, host=host, port=port, log_path=log_path,
                              model_name=served_model_name,
                              timeouts_s=(idle_timeout, head_timeout))[3:]
        raise SystemExit(serve_main([*argv, "--workers", str(workers)]))
    serve_forever(engine, host=host, port=port, options=opts, log_path=log_path,
                  model_name=served_model_name, idle_timeout_s=idle_timeout,
                  head_timeout_s=head_timeout)


@main.command()
@click.argument("run_dir", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["console", "md", "json", "html"]),
              default="console", show_default=True,
              help="Output format; html writes RUN_DIR/report.html unless --out is given.")
@click.option("--out", "out_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write to this file instead of standard output.")
@click.option("--recompute", is_flag=True,
              help="Recompute every number from records.parquet instead of reading result.json.")
@click.option("--set", "overrides", multiple=True, metavar="PATH=VALUE",
              help="What-if override of the study (repeatable), e.g. "
                   "--set targets.h200.price.usd_per_hour=40 --set slo.ttft_ms=300 "
                   "--set 'targets.*.energy.pue=1.4'. Implies --recompute.")
def report(run_dir: Path, fmt: str, out_file: Path | None, recompute: bool,
           overrides: tuple[str, ...]) -> None:
    """Re-render a run from its stored files; no target is needed.

    With --set, ask "what if" without re-running: the study's prices, SLOs, quality level or
    energy boundary change, and every number is recomputed from the stored records.
    """
    from acceval.analysis import load_result  # not the pipeline: nothing is measured here
    from acceval.report import render

    _report_pool()
    result = load_result(run_dir, recompute=recompute, overrides=list(overrides))
    text = render(result, fmt, run_dir=run_dir)
    if out_file is None and fmt == "html":
        out_file = run_dir / ("report-whatif.html" if overrides else "report.html")
    if out_file is None:
        click.echo(text)
    else:
        from acceval.results.files import write_text_durable

        write_text_durable(out_file, text)
        click.echo(f"wrote {out_file}")


@main.command()
@click.argument("run_dirs", nargs=-1, required=True,
                type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["table", "md", "json"]), default="table",
              show_default=True, help="Output format.")
@click.option("--n-boot", default=1000, show_default=True, type=click.IntRange(100, 100_000),
              help="Bootstrap draws for the latency noise test.")
def compare(run_dirs: tuple[Path, ...], fmt: str, n_boot: int) -> None:
    """Compare runs side by side: each run against the first, per target and load point,
    with whether each difference exceeds the noise (rules in docs/report.md)."""
    from acceval.report.compare import compare_runs, render_compare
    from acceval.results.store import read_records
    from acceval.run_result import RESULT_FILE, RunResult

    if len(run_dirs) < 2:
        raise UsageError("compare needs two or more run folders")
    for d in run_dirs:
        if not (d / RESULT_FILE).exists():
            raise UsageError(f"{d}: no {RESULT_FILE}; is this a run folder?")
    runs = [RunResult.load(d) for d in run_dirs]
    rows = compare_runs(runs, [read_records(d) for d in run_dirs], n_boot=n_boot)
    if not rows:
        raise UsageError("the runs share no target and load point to compare")
    click.echo(render_compare(rows, fmt))


@main.command("import")
@click.argument("files", nargs=-1, required=True,
                type=click.Path(exists=True, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["vllm", "guidellm", "aiperf", "tau-bench",
                                                    "tau2", "agentlab"]),
              required=True, help="The tool that wrote the files: vLLM bench result JSON, "
              "GuideLLM benchmarks.json, AIPerf profile_export.jsonl; agent benchmarks: "
              "τ-bench results JSON, tau2 results JSON or a tau2 run's folder (results.json with "
              "simulations/), AgentLab summary_info.json (one per episode folder).")
@click.option("--study", "study_file", type=click.Path(dir_okay=False, exists=True,
              path_type=Path), default=None, help="Apply this study's prices, SLO, quality "
              "level and verdict (its targets must carry the imported targets' names).")
@click.option("--target", default=None, help="Name every imported point's target this "
              "(default: the name the file gives, e.g. its model).")
@click.option("--usd-per-mtok-in", "usd_in", type=click.FloatRange(min=0), default=None,
              help="Agent benchmarks: USD per 1M prompt tokens, to price each trial's tokens "
              "(with --usd-per-mtok-out).")
@click.option("--usd-per-mtok-out", "usd_out", type=click.FloatRange(min=0), default=None,
              help="Agent benchmarks: USD per 1M completion tokens.")
@click.option("--price-source", default=None, help="Where the token prices come from (shown "
              "beside the cost).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("runs"), show_default=True, help="Where the run folder goes.")
def import_(files: tuple[Path, ...], fmt: str, study_file: Path | None, target: str | None,
            usd_in: float | None, usd_out: float | None, price_source: str | None,
            out_dir: Path) -> None:
    """Read peers' result files into a run folder (per-request records where the file has
    them), analyse it with a study and render its report; every field or line not mapped is
    counted and said (mapping: docs/metrics.md)."""
    from acceval.agents.store import TokenPrices
    from acceval.interchange import import_files

    if (usd_in is None) != (usd_out is None):
        raise UsageError("give both --usd-per-mtok-in and --usd-per-mtok-out (or neither)")
    prices = (TokenPrices(usd_in, usd_out, price_source)
              if usd_in is not None and usd_out is not None else None)
    result, run_dir = import_files(list(files), fmt, study_path=study_file, out_dir=out_dir,
                                   target=target, token_prices=prices)
    assert result.log.imported is not None
    for note in result.log.notes:
        click.echo(note)
    click.echo(f"run folder: {run_dir}")
    click.echo(f"report: {run_dir / 'report.html'}")


@main.command()
@click.argument("run_dir", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["vllm"]), default="vllm",
              show_default=True, help="vLLM bench result JSON (what dashboards such as "
              "InferenceX read), one file per load point.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              default=None, help="Folder for the files (default: RUN_DIR/export-vllm).")
def export(run_dir: Path, fmt: str, out_dir: Path | None) -> None:
    """Write a run in a peer's result schema (mapping: docs/metrics.md)."""
    from acceval.interchange import export_vllm

    for path in export_vllm(run_dir, out_dir or run_dir / f"export-{fmt}"):
        click.echo(f"wrote {path}")


@main.command()
@click.option("--dir", "runs_dir", default="runs", show_default=True,
              type=click.Path(file_okay=False, path_type=Path), help="Folder of run folders.")
def runs(runs_dir: Path) -> None:
    """List the runs in a folder (indexing new ones into its catalog.duckdb)."""
    from acceval.runs_catalog import format_rows, list_runs

    rows = list_runs(runs_dir)
    where = runs_dir.resolve()
    if not rows:
        click.echo(f"no runs in {where} (run folders go under `acceval run --out`, the "
                   "study's output.dir, or runs/ beside the study file; list another folder "
                   "with --dir)")
        return
    click.echo(f"runs in {where}:")
    cols = ["run_id", "study", "created_utc", "targets", "interrupted"]
    click.echo(format_rows(cols, [tuple(r[c] for c in cols) for r in rows]))


@main.command()
@click.argument("sql")
@click.option("--dir", "runs_dir", default="runs", show_default=True,
              type=click.Path(file_okay=False, path_type=Path), help="Folder of run folders.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table",
              show_default=True, help="Output format (json: one object per line).")
def query(sql: str, runs_dir: Path, fmt: str) -> None:
    """Run SQL over every run: views `runs`, `points` (per load point summaries) and
    `records` (every request of every run)."""
    from acceval.runs_catalog import format_rows
    from acceval.runs_catalog import query as run_query

    cols, rows = run_query(runs_dir, sql)
    click.echo(format_rows(cols, rows, fmt))


@main.command()
@click.option("--quick", is_flag=True, help="A shortened study (what CI runs as a test).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("runs"), show_default=True, help="Folder for run folders.")
@click.option("--no-progress", is_flag=True, help="Do not show the live progress display.")
@click.option("--print-study", is_flag=True, help="Print the built-in study and exit.")
def demo(quick: bool, out_dir: Path, no_progress: bool, print_study: bool) -> None:
    """Run the built-in study on this machine: no GPU, no network, real local servers."""
    from acceval.demo import demo_study, demo_study_text
    from acceval.pipeline import execute
    from acceval.report.console import print_summary

    if print_study:
        click.echo(demo_study_text())
        return
    study = demo_study(quick=quick)
    result, run_dir = execute(study, base_dir=Path.cwd(), out_dir=out_dir,
                              progress=not no_progress)
    print_summary(result, run_dir)


@main.command()
@click.argument("study_file", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="Output format.")
def plan(study_file: Path, fmt: str) -> None:
    """Plan before renting: for each target, from the catalog and the study's `plan:` model,
    whether the model fits, the largest batch at the study's context lengths, prefill and
    decode upper bounds per chip (compute- or memory-bound), where adding chips stops
    paying, and the cost per task at those bounds. Every number is planned, not measured
    (docs/planning.md); `plan.measure_host` measures this CPU's figures first."""
    from acceval.analysis import plan_study, study_catalog
    from acceval.claims.host import measure_host
    from acceval.report._claims import plan_lines
    from acceval.study import load_study

    study = load_study(study_file)
    if study.plan is None:
        raise UsageError(f"{study_file}: no `plan:` section (the model to size: parameters, "
                         "layers, hidden, heads, vocab, contexts; docs/planning.md)")
    host = measure_host() if study.plan.measure_host else None
    plans = plan_study(study, study_catalog(study, study_file.parent), host)
    if fmt == "json":
        click.echo(json.dumps([p.model_dump(mode="json") for p in plans], indent=2))
        return
    click.echo("\n".join(plan_lines(plans)))


@main.command()
@click.argument("hardware_id", required=False)
@click.option("--catalog", "catalog_file", default=None,
              type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="A user catalog file, merged over the shipped one (as costs.catalog).")
def catalog(hardware_id: str | None, catalog_file: Path | None) -> None:
    """List the hardware catalog, or show one entry with every figure's source and date and
    its prices. A study's platform.hardware must be one of these ids."""
    from acceval.economics import load_catalog
    from acceval.runs_catalog import format_rows

    cat = load_catalog(catalog_file)
    if hardware_id is None:
        cols = ["id", "name", "memory", "bandwidth", "fp8", "bf16", "scale-up", "per node",
                "domain"]

        def f(hw: Any, name: str) -> str:
            fact = getattr(hw, name)
            return "—" if fact is None else f"{fact.value:g} {fact.unit}"

        def memory(hw: Any) -> str:
            # One basis for the column (sources publish GB, GiB or MiB); as published in
            # `acceval catalog ID`.
            gb = hw.memory_gb
            return "—" if gb is None else f"{gb:.3g} GB"

        rows = [(hw.id, hw.name, memory(hw), f(hw, "memory_bandwidth"),
                 f(hw, "peak_fp8"), f(hw, "peak_bf16"), f(hw, "scale_up_bandwidth"),
                 f(hw, "chips_per_node"), f(hw, "chips_per_domain"))
                for hw in cat.hardware.values()]
        click.echo(format_rows(cols, rows))
        click.echo(f"\nmemory in GB (10^9 bytes), converted from each source's unit; "
                   f"{len(cat.prices)} prices; `acceval catalog ID` shows an entry as published")
        return
    why = cat.hardware_problem(hardware_id)
    if why is not None:
        raise UsageError(why)
    hw = cat.hardware[hardware_id]
    click.echo(f"{hw.id}: {hw.name} ({hw.vendor}, {hw.kind})")
    for name, fact in hw.facts():
        extra = "".join(f"; {x}" for x in (fact.date, fact.note) if x)
        click.echo(f"  {name}: {fact.value:g} {fact.unit} [{fact.grade}] ({fact.source}"
                   f"{extra})")
    if hw.note:
        click.echo(f"  note: {hw.note}")
    for p in cat.prices_for(hw.id):
        click.echo(f"  price {p.id}: {p.chip_rate_usd_per_hour:.4g} USD per chip-hour, "
                   f"{p.pricing}, {p.provider} [{p.grade}] ({p.source}; {p.date or 'undated'})")


@main.command("artifact-check")
@click.argument("artifact")
@click.option("--runtime-a", default="ortgenai", show_default=True, help="First runtime.")
@click.option("--runtime-b", default="numpy", show_default=True,
              help="Second runtime (numpy needs no torch; transformers is torch eager).")
@click.option("--prompts", default=32, show_default=True, type=click.IntRange(1, 10_000),
              help="Held-out prompts to compare answers on.")
@click.option("--min-agreement", default=0.95, show_default=True, type=click.FloatRange(0, 1),
              help="Smallest share of identical answers that passes.")
def artifact_check(artifact: str, runtime_a: str, runtime_b: str, prompts: int,
                   min_agreement: float) -> None:
    """Artifact portability: verify checksums, load the same weights in two runtimes and
    compare their answers (and logits where reachable). Exit 3 when the check fails.

    ARTIFACT is builtin:NAME or a model folder.
    """
    from acceval.errors import GateFailed
    from acceval.portability import check_artifact

    check = check_artifact(artifact, runtime_a=runtime_a, runtime_b=runtime_b,
                           n_prompts=prompts, min_agreement=min_agreement)
    click.echo(json.dumps(check.model_dump(mode="json"), indent=2))
    if check.verdict == "fail":
        raise GateFailed(f"artifact check failed: {'; '.join(check.reasons) or 'see above'}")


def entry(argv: list[str] | None = None, *, own_process: bool = False) -> int:
    """Run the command line; ``own_process``: the process exists for this command alone (the
    console script), so process-wide settings that suit acceval's commands may be taken."""
    try:
        main.main(args=argv, prog_name="acceval", standalone_mode=False,
                  obj=_OWN_PROCESS if own_process else None)
    except AccevalError as exc:
        click.echo(f"acceval: error: {exc}", err=True)
        return exc.exit_code
    except click.exceptions.Abort:
        click.echo("acceval: interrupted", err=True)
        return 1
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except KeyboardInterrupt:
        click.echo("acceval: interrupted", err=True)
        return 1
    return 0


def run_main() -> None:
    sys.exit(entry(own_process=True))
