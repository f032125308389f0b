"""A run folder written before the gate existed (steps without the ``gate`` and ``refused``
columns) is still read and analysed: the columns come back null, and the section shows no
gate verdicts rather than failing."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from acceval.agents.analyze import target_result
from acceval.agents.spec import Agents
from acceval.agents.store import STEPS_FILE, read, write
from acceval.economics.spec import StudyCosts
from helpers import agent_fixture


class _Costs:
    costs = StudyCosts()


def test_steps_without_the_gate_columns_are_read_as_null(tmp_path: Path) -> None:
    recs = agent_fixture.records()
    write(tmp_path, recs.steps.drop_columns(["gate", "refused"]), recs.episodes, recs.log)
    assert "gate" not in pq.read_table(tmp_path / "agents" / STEPS_FILE).column_names
    back = read(tmp_path)
    assert back is not None and back.steps.num_rows == recs.steps.num_rows
    assert set(back.steps.column("gate").to_pylist()) == {None}
    from acceval.agents.analyze import _episodes

    spec = Agents.model_validate(agent_fixture.AGENTS)
    eps = _episodes(back.steps, back.episodes)["bad"]
    t = target_result(spec.targets[1], eps, None, 2, _Costs(), None)  # type: ignore[arg-type]
    assert t.gate_verdicts == {} and t.refused_irreversible == 0
    assert t.unconfirmed_irreversible.k == 1  # the older record of an unconfirmed order
