"""Renderers of a RunResult: console, Markdown, JSON (and HTML). Results never import this."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from acceval.errors import AccevalError, UsageError
from acceval.run_result import RunResult

if TYPE_CHECKING:  # pyarrow and the HTML renderer are imported only for the HTML format
    import pyarrow as pa

    from acceval.report.html import Samples


def render(result: RunResult, fmt: str, *, run_dir: Path | None = None) -> str:
    """Render ``result`` in ``fmt`` (console, md, json, html), every money-per-unit figure in
    the one scale the result's verdict was written in."""
    from acceval.units import report_scale, scale_of
    from acceval.verdict import money_scale

    scale = scale_of(result.verdict.money_scale) or money_scale(result.targets, result.agents)
    with report_scale(scale):
        return _render(result, fmt, run_dir)


def _render(result: RunResult, fmt: str, run_dir: Path | None) -> str:
    if fmt == "json":
        return result.model_dump_json(indent=2)
    if fmt == "md":
        from acceval.report.markdown import render_markdown

        return render_markdown(result)
    if fmt == "console":
        from acceval.report.console import render_console

        return render_console(result)
    if fmt == "html":
        from acceval.report.html import render_html

        # The timeline and the sample outputs need the records; without a run folder the
        # page says "not measured" for them.
        if run_dir is None:
            return render_html(result)
        return render_html(result, records=_chart_records(run_dir),
                           samples=_picked_samples(result, run_dir))
    raise UsageError(f"unknown report format '{fmt}'")


def write_outputs(result: RunResult, run_dir: Path) -> None:
    """report.html beside the result, and the run in the catalog of its runs folder."""
    from acceval.results.files import write_text_durable
    from acceval.runs_catalog import index_run

    write_text_durable(run_dir / "report.html", render(result, "html", run_dir=run_dir))
    try:
        index_run(run_dir)
    except AccevalError as exc:
        # A locked or damaged catalog must not cost the user a finished run.
        result.warnings.append(f"runs catalog not updated: {exc}")
        result.save(run_dir)


__all__ = ["render", "write_outputs"]


def _chart_records(run_dir: Path) -> pa.Table:
    """The columns the charts read, for every record (no texts, no chunk stamps)."""
    from acceval.report.html import CHART_COLUMNS
    from acceval.results.store import read_records

    return read_records(run_dir, CHART_COLUMNS)


def _picked_samples(result: RunResult, run_dir: Path) -> Samples:
    """Each target's sample outputs, its texts read one target at a time: a run's texts are
    most of its records' memory, and a page shows a few of them."""
    from acceval.report.html import SAMPLE_COLUMNS, pick_samples
    from acceval.results.store import read_records

    return {t.name: pick_samples(read_records(run_dir, SAMPLE_COLUMNS, target=t.name), t.name)
            for t in result.targets}
