"""Everything the exit test computes reaches HTML and Markdown: the cost with its items, the
reasons, the exports, the functions lost and the managed-service questions and answers."""

from __future__ import annotations

from pathlib import Path

from acceval.report import render
from helpers.verdict_runs import Spec, build

EXIT = {
    "weights": {"status": "no", "answer": "weights stay inside the service",
                "evidence": "https://example.com/terms"},
    "data": {"status": "yes", "evidence": "https://example.com/data"},
    "code": {"status": "yes", "evidence": "https://example.com/code"},
    "lost_functions": ["managed <b>guardrails</b>", "hosted evaluation"],
    "engineering_hours": 40, "egress_gb": 500, "dual_running_hours": 72,
    "managed_service": {
        "name": "hosted tuning", "customization_depth": "fine_tuning",
        "model_ownership": {"status": "partial", "answer": "licensed to the customer",
                            "evidence": "https://example.com/own"},
        "weights_export": {"status": "no", "answer": "no weight export",
                           "evidence": "https://example.com/export"},
        "data_deletion": {"status": "yes", "answer": "deleted within 30 days",
                          "evidence": "https://example.com/delete"},
    },
}


def test_exit_cost_items_reasons_and_service_answers_are_shown(tmp_path: Path) -> None:
    r = build(tmp_path / "run", [Spec("managed", 2.0, extra=(("exit", EXIT),)), Spec("own")],
              costs={"engineer_usd_per_hour": 150, "egress_usd_per_gb": 0.09})
    ex = r.target("managed").exit
    assert ex is not None and ex.readiness == "locked"
    items = {i.name: i.usd for i in ex.cost.items}
    assert items["engineering"] == 40 * 150 and items["egress"] == 500 * 0.09
    assert ex.managed_service is not None
    md = render(r, "md")
    html = render(r, "html", run_dir=tmp_path / "run")
    for text in (md, html):
        assert "Leaving managed: locked" in text
        assert "weights cannot be exported" in text
        for formula in ("engineering_hours × engineer_usd_per_hour", "egress_gb × "
                        "egress_usd_per_gb", "dual_running_hours × fleet_usd_per_hour"):
            assert formula in text
        assert "$6,000" in text  # the engineering item
        assert "hosted evaluation" in text and "weights stay inside the service" in text
        assert "model ownership" in text and "licensed to the customer" in text
        assert "deleted within 30 days" in text
        assert "freedom to leave locked" in text
        assert "managed &lt;b&gt;guardrails&lt;/b&gt;" in text  # shown, never interpreted
    assert "<b>guardrails</b>" not in html
