"""The HTML report in real headless Chromium: it loads offline with no console error and no
network request, its charts draw (pixels vary inside every plot), and model outputs carrying
<script> or <img onerror> are shown as text and never run.

Needs Chromium: ``apt-get install -y chromium`` (Debian/Ubuntu).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from acceval.report.html import render_html
from acceval.results.store import read_records
from helpers import run_fixture
from helpers.cdp import Page, chromium_binary, navigate, open_page, pixel_std

# A drawn Plotly chart (axes, grid, traces) has a grey-level spread well above this; a blank
# or single-colour box has ~0.
MIN_PIXEL_STD = 5.0


async def _wait_drawn(page: Page, expected: int, timeout_s: float = 15) -> str | None:
    drawn = None
    for _ in range(int(timeout_s / 0.1)):
        drawn = await page.evaluate("document.documentElement.dataset.chartsDrawn || null")
        if drawn == str(expected):
            break
        await asyncio.sleep(0.1)
    return drawn


async def _check(report: Path) -> dict[str, object]:
    out: dict[str, object] = {}
    async with open_page() as page:
        url = report.resolve().as_uri()
        await navigate(page, url)
        out["drawn"] = await _wait_drawn(page, 7)
        out["pwned"] = await page.evaluate("typeof window.__acceval_pwned")
        out["text"] = await page.evaluate("document.getElementById('samples').innerText")
        out["boxes"] = boxes = await page.evaluate(
            "Array.from(document.querySelectorAll('.chart')).map(e => {"
            " const r = e.getBoundingClientRect();"
            " return [e.id, r.x, r.y + window.scrollY, r.width, r.height]; })")
        shots = [(b[0], await page.screenshot_clip(*b[1:])) for b in boxes]
        out["errors"], out["requests"], out["url"] = list(page.errors), list(page.requests), url
        await navigate(page, "about:blank")
        out["std"] = {cid: await pixel_std(page, png) for cid, png in shots}
    return out


def test_report_renders_offline_and_never_runs_model_output(tmp_path: Path) -> None:
    assert chromium_binary(), "Chromium is required: apt-get install -y chromium"
    run_dir = tmp_path / "run"
    result = run_fixture.build(run_dir)
    report = run_dir / "report.html"
    report.write_text(render_html(result, records=read_records(run_dir)), encoding="utf-8")

    out = asyncio.run(asyncio.wait_for(_check(report), 60))

    assert out["errors"] == []
    assert out["requests"] == [out["url"]]
    assert out["drawn"] == "7"
    assert out["pwned"] == "undefined"
    for payload in run_fixture.PAYLOADS[:2]:
        assert payload in out["text"]  # shown as text
    assert len(out["boxes"]) == 7
    for cid, std in out["std"].items():
        assert std > MIN_PIXEL_STD, f"{cid} looks blank (grey-level std {std:.2f})"
