"""The sieve in front of the parser changes no reading: every recorded and documented page
reads the same with it as parsed whole, with the same unmapped families (less the
``_created`` series, which say when a series began); on a vLLM page it leaves a small share
of the lines to parse."""

from __future__ import annotations

from pathlib import Path

import pytest

from acceval.telemetry import parse_metrics
from acceval.telemetry.names import FAMILIES
from acceval.telemetry.sieve import sieve

PAGES = sorted((Path(__file__).parents[2] / "fixtures" / "metrics").glob("*.txt"))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_the_sieve_changes_no_reading(page: Path) -> None:
    text = page.read_text()
    whole, sieved = parse_metrics(text, whole=True), parse_metrics(text)
    assert whole.error is None and sieved.error is None
    assert sieved.readings == whole.readings and sieved.readings
    assert sieved.source == whole.source
    assert sieved.unmapped == [u for u in whole.unmapped if not u.endswith("_created")]


def test_a_vllm_page_leaves_the_parser_a_few_lines() -> None:
    # Reconstructed vLLM v1 page (~60 KB, build_vllm_v1_page.py): histograms, HTTP, process.
    text = (Path(__file__).parents[2] / "fixtures" / "metrics" / "vllm-v1-page.txt").read_text()
    out = sieve(text, FAMILIES)
    # The latency histograms' sums and counts are read (telemetry.latency), their buckets not.
    assert len(text) > 50_000 and len(out.text) < len(text) / 10
    assert "vllm:e2e_request_latency_seconds" not in out.unmapped
    assert "vllm:e2e_request_latency_seconds_sum" in out.text
    assert "vllm:request_params_n" in out.unmapped
    assert "http_request_duration_highr_seconds" in out.unmapped
    assert not any(u.endswith(("_created", "_bucket")) for u in out.unmapped)


def test_a_known_histogram_keeps_its_sum_and_count_not_its_buckets() -> None:
    text = ("# HELP h_seconds x\n# TYPE h_seconds histogram\n"
            'h_seconds_bucket{le="0.1"} 1.0\nh_seconds_bucket{le="+Inf"} 2.0\n'
            "h_seconds_sum 0.5\nh_seconds_count 2.0\nh_seconds_created 1.7e9\n"
            "# TYPE other gauge\nother 3\n")
    out = sieve(text, {"h_seconds"})
    assert out.text.splitlines() == ["# HELP h_seconds x", "# TYPE h_seconds histogram",
                                     "h_seconds_sum 0.5", "h_seconds_count 2.0"]
    assert out.unmapped == ["other"] and out.bad_line is None


def test_a_line_that_is_not_the_format_is_found_even_when_dropped() -> None:
    assert sieve("ok_metric 1\n<html>\n", set()).bad_line == "<html>"
    assert parse_metrics("# TYPE a gauge\na 1\nnot a metric line at all\n").error is not None
