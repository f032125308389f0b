"""Hand-made agent episodes through the real record path (``store.tables``), for the
analysis and report tests: no browser, every outcome chosen and counted by hand."""

from __future__ import annotations

from acceval.agents.env import Episode, EpisodePlan, Step
from acceval.agents.scenarios import SCENARIOS
from acceval.agents.store import AgentRecords, AgentsLog, tables

MS = 1_000_000
PAYLOAD = "<script>window.__acceval_pwned = 9;</script>"


def _step(i: int, tool: str, *, ok: bool = True, irreversible: str | None = None,
          confirmed: bool | None = None, args: str = '{"ref": 1}') -> Step:
    t0 = (i + 1) * 100 * MS
    return Step(step=i, tool=tool, arguments=args, ok=ok, error=None if ok else "no element",
                irreversible=irreversible, confirmed=confirmed, model_ms=2.0, action_ms=50.0,
                prompt_tokens=100, completion_tokens=10, started_ns=t0, done_ns=t0 + 60 * MS,
                observation="ok\npage /catalogue (language en)" if ok else "error: no element",
                content="")


def episode(scenario: str, trial: int, index: int, tools: list[str], *, state_ok: bool,
            said_done: bool, unconfirmed: bool = False, perturbation: str | None = None,
            recovered_after: int | None = None, args: str = '{"ref": 1}') -> Episode:
    plan = EpisodePlan(SCENARIOS[scenario], trial, index, perturbation, 1, index)
    steps = []
    for i, tool in enumerate(tools):
        irr = conf = None
        if tool == "click!":  # an irreversible click
            tool, irr, conf = "click", "order", not unconfirmed
        steps.append(_step(i, tool, irreversible=irr, confirmed=conf, args=args))
    ep = Episode(plan, steps, state_problem=None if state_ok else "orders are [], expected 1",
                 said_done=said_done, stopped_by="done" if said_done else "max_steps",
                 started_ns=0, done_ns=(len(tools) + 1) * 100 * MS)
    if perturbation is not None:
        ep.onset_ns, ep.onset_step = 200 * MS, 1
        if recovered_after is not None:
            ep.resolved_ns = ep.onset_ns + recovered_after * 100 * MS
            ep.resolved_step = 1 + recovered_after - 1
    return ep


def records() -> AgentRecords:
    """Two agents on buy-one (4 steps) and switch-language (1 step), two trials each.

    good: all four correct; one met an expired session, recovered in 3 steps / 0.3 s.
    bad: buy-one trial 0 placed the order unconfirmed (state right, still not correct);
         buy-one trial 1 said done with the state wrong (silent); switch-language both
         correct; one ask_human. Its arguments carry a script payload.
    """
    buy = ["click", "click", "click", "confirm", "click!", "done"]
    good = [
        episode("buy-one", 0, 0, buy, state_ok=True, said_done=True,
                perturbation="expired_session", recovered_after=3),
        episode("buy-one", 1, 1, buy, state_ok=True, said_done=True),
        episode("switch-language", 0, 2, ["click", "done"], state_ok=True, said_done=True),
        episode("switch-language", 1, 3, ["click", "done"], state_ok=True, said_done=True),
    ]
    bad = [
        episode("buy-one", 0, 0, ["click", "click", "click", "click!", "done"], state_ok=True,
                said_done=True, unconfirmed=True, args=PAYLOAD),
        episode("buy-one", 1, 1, ["click", "done"], state_ok=False, said_done=True),
        episode("switch-language", 0, 2, ["ask_human", "click", "done"], state_ok=True,
                said_done=True),
        episode("switch-language", 1, 3, ["click", "done"], state_ok=True, said_done=True),
    ]
    steps, eps = tables([("good", e) for e in good] + [("bad", e) for e in bad])
    log = AgentsLog(browser="fixture", targets={"good": "scripted policy",
                                                "bad": "scripted policy"})
    return AgentRecords(steps, eps, log)


AGENTS = {
    "trials": 2, "only": ["switch-language", "buy-one"],
    "targets": [
        {"name": "good", "policy": {}, "price": {"usd_per_hour": 3.6}},
        {"name": "bad", "policy": {"skip_confirm": 0.5, "premature_done": 0.2},
         "price": {"usd_per_hour": 3.6}},
    ],
}
