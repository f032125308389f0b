"""The verdict's rules, each on a run analysed through the real path, and the same words in
every format."""

from __future__ import annotations

from pathlib import Path

import pytest

from acceval.analysis import load_result
from acceval.report import render
from acceval.report.console import verdict_text
from acceval.run_result import RunResult
from helpers.verdict_runs import Point, Spec, build


def _formats(result: RunResult, run_dir: Path) -> dict[str, str]:
    return {"console": "\n".join(verdict_text(result)), "md": render(result, "md"),
            "html": render(result, "html", run_dir=run_dir)}


def test_a_separated_winner_is_named_with_one_ratio(tmp_path: Path) -> None:
    r = build(tmp_path / "run", [Spec("cheap", 1.0), Spec("dear", 3.0)])
    v = r.verdict
    assert v.status == "winner" and v.winner == "cheap" and v.tied == []
    assert v.ratio_to_runner_up == pytest.approx(3.0, rel=0.02)
    assert "3.0× cheaper than dear" in v.headline
    for name, text in _formats(r, tmp_path / "run").items():
        assert v.headline in text.replace("&#x27;", "'"), name
    assert "e-0" not in v.headline  # money never in scientific notation
    table = render(r, "console")
    assert "±" not in table and "100% [" in table  # intervals as [low–high]


def test_overlapping_intervals_are_a_tie_in_every_format(tmp_path: Path) -> None:
    r = build(tmp_path / "run", [Spec("a", 1.0), Spec("b", 1.02)])
    v = r.verdict
    assert v.status == "tie" and v.winner is None and set(v.tied) == {"a", "b"}
    assert "Cheapest correct task:" not in v.headline
    # The lowest is named with its cost, an upper bound ("at most $X") reading as well.
    assert "a is lowest with " in v.headline and " at at " not in v.headline
    for name, text in _formats(r, tmp_path / "run").items():
        assert "Tie on the cheapest correct task" in text, name
        assert "Cheapest correct task:" not in text, name


def test_when_none_qualifies_no_format_names_a_cheapest(tmp_path: Path) -> None:
    # "fast" is cheap but wrong; "slow" misses the SLO everywhere.
    r = build(tmp_path / "run", [Spec("wrong", 0.5, (Point(accuracy=0.3),)),
                                 Spec("slow", 1.0, (Point(ttft_ms=500.0),))])
    v = r.verdict
    assert v.status == "none-qualify" and v.winner is None
    assert all(not s.qualified for s in v.standings)
    slow = v.standing("slow")
    assert slow is not None and any("meets the SLO" in x for x in slow.reasons)
    for name, text in _formats(r, tmp_path / "run").items():
        assert "No target qualifies" in text, name
        assert "Cheapest correct task:" not in text, name
        assert "cheapest per correct task" not in text.lower().replace("the cheapest per "
                                                                       "correct task at", ""), name


def test_a_degraded_point_never_becomes_the_operating_point(tmp_path: Path) -> None:
    # The late point is the cheapest per correct task (higher rate, same price), but the
    # load generator fell behind there: the verdict must use the clean point.
    r = build(tmp_path / "run", [Spec("a", 1.0, (Point(rate_rps=10.0),
                                                 Point(rate_rps=40.0, late_ms=30.0)))])
    late = r.target("a").point("poisson 40 rps")
    assert late is not None and not late.trusted
    st = r.verdict.standing("a")
    assert st is not None and st.operating_point == "poisson 10 rps"
    assert "not trusted" in render(r, "md")


def test_a_point_with_too_few_requests_is_not_an_operating_point(tmp_path: Path) -> None:
    # After a kill, a point with one request must not be credited with its rate.
    r = build(tmp_path / "run", [Spec("a", 1.0, (Point(rate_rps=10.0),
                                                 Point(rate_rps=48.0, n=1)))])
    st = r.verdict.standing("a")
    assert st is not None and st.operating_point == "poisson 10 rps"
    only = build(tmp_path / "run2", [Spec("a", 1.0, (Point(rate_rps=48.0, n=1),))])
    st2 = only.verdict.standing("a")
    assert st2 is not None and not st2.qualified and st2.operating_point is None
    assert any("at least 20 requests" in x for x in st2.reasons)


def test_the_operating_point_has_one_definition(tmp_path: Path) -> None:
    r = build(tmp_path / "run", [Spec("a", 1.0, (Point(rate_rps=5.0), Point(rate_rps=20.0))),
                                 Spec("b", 2.0)])
    st = r.verdict.standing("a")
    assert st is not None and st.operating_point == "poisson 20 rps"  # the cheaper one
    t = r.target("a")
    assert t.portability is not None
    assert t.portability.levels.performance.details.operating_point == st.operating_point
    assert t.energy is None or t.energy.load_label == st.operating_point
    md = render(r, "md")
    assert "| a | poisson 20 rps |" in md


def test_recompute_and_a_what_if_run_the_same_analysis(tmp_path: Path) -> None:
    run = tmp_path / "run"
    r = build(run, [Spec("cheap", 1.0), Spec("dear", 3.0)])
    again = load_result(run, recompute=True)
    assert again.verdict == r.verdict
    flipped = load_result(run, overrides=["targets.dear.price.usd_per_hour=0.2"])
    assert flipped.verdict.winner == "dear"
    assert flipped.warnings[0].startswith("what-if")


def test_outside_text_with_markup_is_printed_not_interpreted(tmp_path: Path) -> None:
    from acceval.report.console import print_summary

    odd = "engine log: [/INST] [bold]x[/bold] ]["
    r = build(tmp_path / "run", [Spec("ok"), Spec("down", failure=odd)])
    st = r.verdict.standing("down")
    assert st is not None and not st.qualified and odd in st.reasons[0]
    table = render(r, "console")
    assert "[/INST]" in table  # the text as it was, not a markup error
    print_summary(r, tmp_path / "run")  # raised rich.errors.MarkupError before


def test_repeats_widen_the_cost_interval_by_the_throughput_spread(tmp_path: Path) -> None:
    """With repeats, the interval covers throughput's spread too: a cost per correct task
    scales as one over throughput, so the slowest repeat raises the high end and the
    fastest lowers the low end; without repeats, throughput is said to be taken as exact."""
    from acceval.metrics.repeats import RepeatInterval
    from acceval.results.section import RepeatsResult
    from acceval.verdict import Rules, standings

    r = build(tmp_path / "run", [Spec("cheap", 1.0), Spec("dear", 3.0)])
    t = r.target("cheap")
    before = next(s for s in r.verdict.standings if s.target == "cheap")
    assert "throughput (one run of each point)" in before.taken_as_exact
    op = t.point(before.operating_point)
    assert op is not None and before.cost_per_correct_ci_usd is not None
    used = op.summary.request_throughput_rps
    assert used is not None
    iv = RepeatInterval(n=3, values=(used * 0.9, used, used * 1.2), mean=used * 1.03,
                        low=used * 0.8, high=used * 1.25)
    d = RepeatInterval(n=1, values=(1.0,), mean=1.0, low=None, high=None)
    t.repeats = [RepeatsResult(label=op.label, index=op.index, runs=3, labels=[op.label] * 3,
                               ttft_p50_ms=d, ttft_p95_ms=d, ttft_p99_ms=d, e2e_p95_ms=d,
                               request_throughput_rps=iv, output_token_throughput_tps=d)]
    after = next(s for s in standings(r.targets, Rules(min_point_requests=1))
                 if s.target == "cheap")
    lo, hi = before.cost_per_correct_ci_usd
    assert after.cost_per_correct_ci_usd == (pytest.approx(lo / 1.25), pytest.approx(hi / 0.8))
    assert "throughput over 3 runs" in after.interval_covers
    assert not any("throughput" in x for x in after.taken_as_exact)


def test_a_winner_whose_ranking_flips_says_so_in_the_headline(tmp_path: Path) -> None:
    """A 1.3× margin against a ±30 % price range: the named winner holds only at the declared
    prices, and the headline (what gets forwarded) says it, not only a line below it."""
    near = build(tmp_path / "near", [Spec("cheap", 1.0), Spec("dear", 1.3)])
    assert near.verdict.status == "winner" and near.verdict.winner == "cheap"
    assert near.economics is not None and near.economics.sensitivity is not None
    assert near.economics.sensitivity.flips
    assert near.verdict.headline.endswith(
        "The ranking flips within the declared sensitivity ranges, so it holds only at the "
        "inputs as declared (below).")
    far = build(tmp_path / "far", [Spec("cheap", 1.0), Spec("dear", 5.0)])  # past 1/0.3
    assert far.economics is not None and far.economics.sensitivity is not None
    assert not far.economics.sensitivity.flips
    assert "flips" not in far.verdict.headline
