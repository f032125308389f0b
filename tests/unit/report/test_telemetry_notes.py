"""The telemetry section's source lines: failed scrapes counted once, with the last error,
and put down to the injected interruption where the run stopped that server."""

from __future__ import annotations

from pathlib import Path

from acceval.analysis import load_result
from acceval.report._telemetry import notes

DEMO = Path(__file__).resolve().parents[2] / "fixtures" / "demo-run"


def test_failed_scrapes_are_counted_once_and_put_down_to_the_interruption() -> None:
    result = load_result(DEMO)
    hit = [t for t in result.targets if t.telemetry is not None and t.telemetry.failures]
    assert [t.interruption is not None for t in hit] == [True]
    line = next(x for x in notes(result) if x.startswith(f"{hit[0].name}:"))
    failures = hit[0].telemetry.failures if hit[0].telemetry else 0
    assert f", {failures} failed (the last: [Errno 111] Connection refused)" in line
    assert "scrape(s) failed" not in line
    assert line.endswith("; the injected interruption stopped its server for a while")
    clean = [x for x in notes(result) if not x.startswith(f"{hit[0].name}:")]
    assert clean and all("failed" not in x and "interruption" not in x for x in clean)
