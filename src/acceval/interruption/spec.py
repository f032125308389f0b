"""The study file's ``interruption`` section: which target, when, for how long, and how.

Validated at the edge like the rest of the study (``extra="forbid"``, frozen). What each
action does to the target and what it simulates: docs/demand-and-faults.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Action = Literal["kill_restart", "freeze", "command"]

#: Longest any of its times may be: 30 days.
MAX_DURATION_S = 30 * 86_400.0


class Interruption(BaseModel):
    """A fault injected into one target during one load point, and how recovery is judged."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    target: str = Field(description="Name of the target to interrupt.")
    at_s: float = Field(gt=0, le=MAX_DURATION_S,
                        description="Seconds after the point's start when the fault hits.")
    down_s: float = Field(
        ge=0, le=MAX_DURATION_S,
        description="Seconds the target stays down before it is restored (restart, "
        "SIGCONT or restore_command); a restart's own start-up time comes on top.")
    action: Action = Field(
        "kill_restart",
        description="kill_restart: SIGKILL the local server, start it again on the same port "
        "after down_s. freeze: SIGSTOP the local server for down_s, then SIGCONT (a hung "
        "process: connections stay open, nothing is answered). command: run `command` at at_s "
        "and `restore_command` after down_s (any target, e.g. a script that drains a node).")
    command: str | None = Field(
        None, description="Shell command run at at_s (action: command).")
    restore_command: str | None = Field(
        None, description="Shell command run after down_s (action: command); optional.")
    point: str | int | None = Field(
        None, description="The load point to interrupt: its label or index. Default: the "
        "demand replay when the study has one, else the last load point. A load point named "
        "here is run once more with the fault, so the latency curve keeps the clean run.")
    window_s: float = Field(
        1.0, gt=0, le=MAX_DURATION_S,
        description="Rolling window (seconds of send time) over which the SLO "
        "percentile is judged to decide when the target has recovered.")
    command_timeout_s: float = Field(
        120.0, gt=0, le=MAX_DURATION_S,
        description="Most seconds a command or restore command may run.")

    @model_validator(mode="after")
    def _command(self) -> Interruption:
        if self.action == "command" and not self.command:
            raise ValueError("action: command needs `command` (the shell command to run)")
        if self.action != "command" and (self.command or self.restore_command):
            raise ValueError(f"command/restore_command only apply to action: command "
                             f"(action is {self.action})")
        return self


def check_interruption(spec: Interruption, serves: Mapping[str, bool]) -> None:
    """Cross-check against the study's targets (name -> has a local server); raise ValueError."""
    if spec.target not in serves:
        raise ValueError(f"interruption.target names '{spec.target}', which is not a target "
                         f"(targets: {', '.join(serves)})")
    if spec.action in ("kill_restart", "freeze") and not serves[spec.target]:
        raise ValueError(f"interruption.action {spec.action} needs a local server (`serve`) on "
                         f"target '{spec.target}'; for a remote endpoint use action: command")


def point_problem(spec: Interruption, labels: Sequence[str], *, replay_label: str,
                  has_replay: bool) -> str | None:
    """What is wrong with ``spec.point``, given the labels of the study's fixed load points
    (in index order) and whether it replays demand; None when it names a point."""
    point = spec.point
    if point is None:
        return None
    if point == replay_label:
        return None if has_replay else (
            f"interruption.point is {replay_label!r}, but the study has no demand.replay")
    if not isinstance(point, bool) and (
            point in labels or (isinstance(point, int) and 0 <= point < len(labels))):
        return None
    names = ", ".join(repr(label) for label in labels)
    return (f"interruption.point {point!r} names no load point; use an index "
            f"0..{len(labels) - 1}, one of {names}"
            + (f" or {replay_label!r}" if has_replay else ""))
