"""The claim ledger: shipped claims, a user's claims file and a study's inline claims, each
with its source and the axes it names; the axes it leaves out are flagged by name, and claims
on the same subject and metric that disagree are both kept and flagged as a conflict."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import Field, ValidationError

from acceval.claims.spec import AXES, KIND_MEANING, Claim, Claims
from acceval.errors import StudyError
from acceval.input_files import read_yaml
from acceval.results.section import Section


class ClaimRow(Section):
    """One claim in the ledger, with the axes it names and those it leaves out."""

    id: str
    subject: str
    value: float
    unit: str
    kind: str
    kind_meaning: str
    metric: str
    comparator: str | None
    scope: str  # workload or hardware
    measured_by: str
    document: str
    date: str | None
    location: str | None
    quote: str
    axes: dict[str, str | None]  # every axis by name; None where the source does not say
    missing_axes: list[str]  # the workload axes the source does not state
    conflicts_with: list[str] = Field(default_factory=list)
    origin: str  # shipped, study, or the claims file
    note: str | None = None

    @property
    def value_text(self) -> str:
        v = f"{self.value:g}"
        return f"{self.kind} {v}×" if self.unit == "x" else f"{self.kind} {v} {self.unit}"


class ClaimConflict(Section):
    """Claims on the same subject and metric whose values disagree: both are kept."""

    subject: str
    metric: str
    claims: list[str]
    values: list[float]
    sentence: str



#: Values within this relative distance agree ("almost 4x" and "3.9x"); further apart they
#: conflict ("double" and "6x").
AGREE_WITHIN = 0.05


def _parse(data: Any, where: str) -> list[Claim]:
    items = data.get("claims") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise StudyError(f"{where}: a claims file holds a `claims:` list",
                         hint="see docs/planning.md for a claim's fields")
    out = []
    for i, raw in enumerate(items):
        try:
            out.append(Claim.model_validate(raw))
        except ValidationError as exc:
            first = exc.errors()[0]
            path = ".".join(str(p) for p in first["loc"])
            raise StudyError(f"{where}: claims[{i}].{path}: {first['msg']}",
                             hint="fix that claim; docs/planning.md lists its fields") from None
    return out


def shipped_claims() -> list[Claim]:
    """The seed articles' claims (``acceval/data/claims/seeds.yaml``)."""
    text = (resources.files("acceval") / "data" / "claims" / "seeds.yaml").read_text("utf-8")
    return _parse(yaml.safe_load(text), "seeds.yaml")


def claims_file(path: Path) -> list[Claim]:
    """The claims of a user's ledger file, read within the bounded reader's limits (a
    regular file of a few MiB, UTF-8, YAML depth and aliases bounded)."""
    return _parse(read_yaml(path, where="claims.file", what="claims file"), str(path))


def gather(spec: Claims, base_dir: Path | None) -> list[tuple[Claim, str]]:
    """Every claim the study asks for, with where it came from; ids must be unique."""
    found: list[tuple[Claim, str]] = []
    if spec.builtin:
        found += [(c, "shipped") for c in shipped_claims()]
    if spec.file is not None:
        path = Path(spec.file)
        path = path if path.is_absolute() else (base_dir or Path.cwd()) / path
        found += [(c, spec.file) for c in claims_file(path)]
    found += [(c, "study") for c in spec.items]
    ids = [c.id for c, _ in found]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise StudyError(f"claims: ids must be unique; repeated: {', '.join(dupes)}",
                         [("claims", f"repeated ids {', '.join(dupes)}",
                           "rename a study or file claim")])
    return found


def missing_axes(claim: Claim) -> list[str]:
    """The workload axes the claim's source does not state (none for a capacity figure
    beyond its precision, which is a hardware axis too)."""
    names = ("precision",) if claim.scope == "hardware" else AXES
    if claim.scope == "hardware" and "FLOP" not in claim.unit.upper():
        return []
    return [a for a in names if getattr(claim.axes, a) is None]


def _key(c: Claim) -> tuple[str, str, str | None]:
    return (c.subject.lower(), c.metric.lower(), c.axes.precision)


def conflicts(claims: list[Claim]) -> list[ClaimConflict]:
    """Groups of claims on one subject, metric and precision whose values disagree."""
    groups: dict[tuple[str, str, str | None], list[Claim]] = {}
    for c in claims:
        groups.setdefault(_key(c), []).append(c)
    out = []
    for group in groups.values():
        values = [c.value for c in group]
        low, high = min(values), max(values)
        if len(group) < 2 or high <= low * (1 + AGREE_WITHIN):
            continue
        parts = "; ".join(f"{c.id}: {c.value:g}{'×' if c.unit == 'x' else ' ' + c.unit} "
                          f"({c.source.location or 'document'}: \"{c.source.quote}\")"
                          for c in group)
        out.append(ClaimConflict(
            subject=group[0].subject, metric=group[0].metric, claims=[c.id for c in group],
            values=values,
            sentence=(f"The sources disagree on {group[0].subject} {group[0].metric} "
                      f"({low:g} against {high:g}); both are kept: {parts}")))
    return out


def ledger_rows(found: list[tuple[Claim, str]]) -> tuple[list[ClaimRow], list[ClaimConflict]]:
    """The ledger as the report shows it."""
    clashes = conflicts([c for c, _ in found])
    partners = {i: [j for j in x.claims if j != i] for x in clashes for i in x.claims}
    rows = [ClaimRow(
        id=c.id, subject=c.subject, value=c.value, unit=c.unit, kind=c.kind,
        kind_meaning=KIND_MEANING[c.kind], metric=c.metric, comparator=c.comparator,
        scope=c.scope, measured_by=c.measured_by, document=c.source.document,
        date=c.source.date, location=c.source.location, quote=c.source.quote,
        axes={a: (None if getattr(c.axes, a) is None else str(getattr(c.axes, a)))
              for a in AXES},
        missing_axes=missing_axes(c), conflicts_with=partners.get(c.id, []), origin=origin,
        note=c.note) for c, origin in found]
    return rows, clashes


__all__ = ["claims_file", "conflicts", "gather", "ledger_rows", "missing_axes",
           "shipped_claims"]
