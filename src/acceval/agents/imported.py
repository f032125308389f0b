"""The agents section's part for imported agent benchmarks (τ-bench, tau2, AgentLab).

Pure over the stored trials (:class:`~acceval.agents.store.ImportedTrial`) and the token
prices declared at import. The benchmark judged every trial; this module only counts them
with the same functions the measured agents use (completion with its Wilson interval,
τ-bench's pass^k, step and token summaries) and prices them: by the declared token prices
when every trial has its token counts, and, kept apart, by the agent cost the file states.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from acceval.agents.metrics import RateResult, pass_hat_k, per_correct_interval, rate, stats
from acceval.agents.result import ImportedAgentResult, ImportedCost, PassK
from acceval.agents.store import ImportedTrial, TokenPrices

#: How each format is named in a report.
TOOL_NAMES = {"tau-bench": "τ-bench", "tau2": "τ²-bench", "agentlab": "AgentLab"}
_PER_MTOK = 1e6


def imported_results(trials: list[ImportedTrial], prices: TokenPrices | None
                     ) -> list[ImportedAgentResult]:
    """One result per imported agent (target), in the order the trials name them."""
    by_target: dict[str, list[ImportedTrial]] = defaultdict(list)
    for t in trials:
        by_target[t.target].append(t)
    return [agent_result(name, group, prices) for name, group in by_target.items()]


def agent_result(name: str, trials: list[ImportedTrial], prices: TokenPrices | None
                 ) -> ImportedAgentResult:
    tool = trials[0].tool
    files = sorted({t.file for t in trials})
    by_task: dict[str, list[ImportedTrial]] = defaultdict(list)
    for t in trials:
        by_task[t.task_id].append(t)
    tasks = [(sum(t.success for t in g), len(g)) for g in by_task.values()]
    fewest = min(n for _, n in tasks)
    correct = sum(t.success for t in trials)
    completion = rate(correct, len(trials))
    rewards = [t.reward for t in trials if t.reward is not None]
    notes = []
    if fewest < max(n for _, n in tasks):
        notes.append(f"tasks have between {fewest} and {max(n for _, n in tasks)} trials; "
                     f"pass^k is given up to k = {fewest}, over every task")
    cost, why = _declared_cost(trials, prices, completion)
    if why:
        notes.append(why)
    return ImportedAgentResult(
        name=name, tool=tool, files=files,
        provenance=f"imported from {TOOL_NAMES.get(tool, tool)} file{'s' * (len(files) > 1)} "
                   + ", ".join(files),
        tasks=len(by_task), episodes=len(trials), trials_per_task=fewest,
        completion=completion,
        mean_reward=sum(rewards) / len(rewards) if rewards else None,
        pass_hat_k=[PassK(k=k, value=pass_hat_k(tasks, k)) for k in range(1, fewest + 1)],
        errors=rate(sum(t.error is not None for t in trials), len(trials)),
        steps_per_task=stats([float(t.steps) for t in trials if t.steps is not None]),
        tokens_per_task=stats([float(v) for t in trials if (v := _tokens(t)) is not None]),
        latency_s_per_task=stats([t.duration_s for t in trials if t.duration_s is not None]),
        stopped_by=dict(Counter(t.stopped_by for t in trials if t.stopped_by)),
        cost=cost, peer_cost=_peer_cost(trials, completion, tool), notes=notes)


def _tokens(t: ImportedTrial) -> int | None:
    if t.prompt_tokens is None or t.completion_tokens is None:
        return None
    return t.prompt_tokens + t.completion_tokens


def _priced(total_usd: float, n: int, completion: RateResult, basis: str) -> ImportedCost:
    correct = completion.k
    return ImportedCost(basis=basis, total_usd=total_usd,
                        cost_per_correct_usd=total_usd / correct if correct else float("inf"),
                        cost_per_correct_ci_usd=per_correct_interval(total_usd / n, completion))


def _declared_cost(trials: list[ImportedTrial], prices: TokenPrices | None,
                   completion: RateResult) -> tuple[ImportedCost | None, str | None]:
    """Tokens times the declared prices, when every trial has its token counts."""
    if prices is None:
        return None, None
    missing = sum(t.prompt_tokens is None or t.completion_tokens is None for t in trials)
    if missing:
        return None, (f"{missing} of {len(trials)} trial(s) carry no token counts in the "
                      "file, so the declared token prices give no cost per correct workflow")
    total = sum((t.prompt_tokens or 0) * prices.input_usd_per_mtok
                + (t.completion_tokens or 0) * prices.output_usd_per_mtok
                for t in trials) / _PER_MTOK
    source = f", {prices.source}" if prices.source else ""
    basis = (f"declared token prices (user assumption{source}): "
             f"${prices.input_usd_per_mtok:g} per 1M prompt tokens, "
             f"${prices.output_usd_per_mtok:g} per 1M completion tokens")
    return _priced(total, len(trials), completion, basis), None


def _peer_cost(trials: list[ImportedTrial], completion: RateResult,
               tool: str) -> ImportedCost | None:
    """The agent cost the file states (the benchmark's own pricing), when every trial has it."""
    if not trials or any(t.cost_usd is None for t in trials):
        return None
    total = sum(t.cost_usd or 0.0 for t in trials)
    basis = f"the agent cost {TOOL_NAMES.get(tool, tool)} states per trial (peer-computed)"
    return _priced(total, len(trials), completion, basis)


__all__ = ["TOOL_NAMES", "agent_result", "imported_results"]
