"""The hardware and price catalog: dated, sourced facts that studies can point at.

The shipped catalog (``acceval/data/catalog/*.yaml``) holds published figures, each with
its source and date; a figure no source gives is absent (``None``), never guessed. A user
catalog file (same shape, one YAML with ``hardware``, ``instances`` and ``prices`` lists)
overrides entries by id or adds new ones.
"""

from __future__ import annotations

import difflib
import functools
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from acceval.economics.spec import Pricing
from acceval.errors import StudyError
from acceval.input_files import read_yaml

Grade = Literal["V", "S", "U"]
#: Memory is published in decimal gigabytes by some vendors and in binary units by others
#: (AWS's Neuron docs give GiB; nvidia-smi and NVIDIA's MLPerf files give MiB). Each entry
#: keeps the unit its source used, and bytes are computed here, once.
MEMORY_BYTES_PER_UNIT = {"GB": 1e9, "GiB": 2.0**30, "MiB": 2.0**20, "TB": 1e12}


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class Fact(_Model):
    """One published number with its unit, source and date."""

    value: float = Field(description="The number as published.")
    unit: str = Field(description="Its unit as published: GB, GiB, TB/s, TFLOPS, W, kW.")
    source: str = Field(description="repo:path, paper or page the number was read from.")
    date: str | None = Field(None, description="Snapshot or publication date; None if unstated.")
    grade: Grade = Field("V", description="V primary source, S secondary, U unverified.")
    note: str | None = Field(None, description="Caveats, e.g. a conflicting figure.")


class Hardware(_Model):
    """One chip (or one CPU host counted as a chip)."""

    id: str = Field(description="Catalog id, e.g. h200, trn3, tpu-v6e.")
    name: str = Field(description="Human name.")
    vendor: str = Field(description="Vendor.")
    kind: Literal["gpu", "tpu", "trainium", "cpu"] = Field(description="Family.")
    memory: Fact | None = Field(None, description="Device memory (HBM).")
    memory_bandwidth: Fact | None = Field(None, description="Device memory bandwidth.")
    peak_fp8: Fact | None = Field(None, description="Dense FP8 peak.")
    peak_bf16: Fact | None = Field(None, description="Dense BF16 peak.")
    tdp: Fact | None = Field(None, description="Vendor TDP/TBP (device boundary, L0).")
    allin_power: Fact | None = Field(
        None, description="All-in provisioned power per chip incl. host, network, facility (L4).",
    )
    peak_fp32: Fact | None = Field(None, description="Dense FP32 peak (CPU hosts).")
    scale_up_bandwidth: Fact | None = Field(
        None, description="Chip-to-chip (scale-up) bandwidth per chip, as published; the note "
        "says the direction. The planner reads it as one direction.")
    chips_per_node: Fact | None = Field(
        None, description="Chips in one server (node) joined by the scale-up links.")
    chips_per_domain: Fact | None = Field(
        None, description="Chips in the largest scale-up domain (an UltraServer, an NVL "
        "rack); absent where it is the node.")
    note: str | None = Field(None, description="Caveats.")

    @model_validator(mode="after")
    def _memory_basis(self) -> Hardware:
        if self.memory is not None and self.memory.unit not in MEMORY_BYTES_PER_UNIT:
            raise ValueError(
                f"{self.id}: memory.unit {self.memory.unit!r} is no memory unit: write it as "
                f"its source publishes it, one of {', '.join(MEMORY_BYTES_PER_UNIT)} (GB is "
                "10^9 bytes, GiB 2^30, MiB 2^20)")
        return self

    def facts(self) -> list[tuple[str, Fact]]:
        """Every published figure of this entry, by field name."""
        out = []
        for name in type(self).model_fields:
            value = getattr(self, name)
            if isinstance(value, Fact):
                out.append((name, value))
        return out

    def peak(self, precision: str) -> Fact | None:
        """The dense peak for a compute precision (fp8, bf16, fp32), if published."""
        return {"fp8": self.peak_fp8, "bf16": self.peak_bf16, "fp16": self.peak_bf16,
                "fp32": self.peak_fp32}.get(precision)

    @property
    def memory_bytes(self) -> float | None:
        """Device memory in bytes, from the unit its source published it in."""
        if self.memory is None:
            return None
        return self.memory.value * MEMORY_BYTES_PER_UNIT[self.memory.unit]

    @property
    def memory_gb(self) -> float | None:
        b = self.memory_bytes
        return None if b is None else b / 1e9

    @property
    def tdp_w(self) -> float | None:
        return None if self.tdp is None else self.tdp.value

    @property
    def allin_power_w(self) -> float | None:
        return None if self.allin_power is None else self.allin_power.value * 1000.0


class Instance(_Model):
    """A rentable machine and how many chips it holds."""

    id: str = Field(description="Instance name, e.g. p5e.48xlarge.")
    hardware: str = Field(description="Hardware id of its chips.")
    chips: int = Field(ge=1, description="Chips per instance.")
    source: str = Field(description="Where the chip count comes from.")
    date: str | None = Field(None, description="Snapshot date.")


class PriceEntry(_Model):
    """A dated price for a chip or an instance."""

    id: str = Field(description="Price id used by price.catalog in a study.")
    hardware: str = Field(description="Hardware id.")
    instance: str | None = Field(None, description="Instance name, when the price is for one.")
    provider: str = Field(description="Cloud or source of the rate.")
    pricing: Pricing = Field(description="on_demand, reserved, spot or owned (a TCO rate).")
    usd_per_instance_hour: float | None = Field(None, gt=0, description="Instance rate.")
    usd_per_chip_hour: float | None = Field(None, gt=0, description="Per-chip rate.")
    chips_per_instance: int | None = Field(None, ge=1, description="Chips behind the rate.")
    region: str | None = Field(None, description="Region, when the source names one.")
    includes_energy: bool = Field(True, description="Electricity is inside the rate.")
    source: str = Field(description="Where the price was read.")
    date: str | None = Field(None, description="Date of the price as the source gives it.")
    grade: Grade = Field("S", description="V primary, S secondary, U unverified.")
    note: str | None = Field(None, description="Caveats.")

    @model_validator(mode="after")
    def _rate(self) -> PriceEntry:
        if (self.usd_per_instance_hour is None) == (self.usd_per_chip_hour is None):
            raise ValueError("give exactly one of usd_per_instance_hour, usd_per_chip_hour")
        if self.usd_per_instance_hour is not None and self.chips_per_instance is None:
            raise ValueError("an instance rate needs chips_per_instance")
        return self

    @property
    def chip_rate_usd_per_hour(self) -> float:
        if self.usd_per_chip_hour is not None:
            return self.usd_per_chip_hour
        assert self.usd_per_instance_hour is not None and self.chips_per_instance is not None
        return self.usd_per_instance_hour / self.chips_per_instance


class Catalog(_Model):
    """Hardware, instances and prices, each keyed by id."""

    hardware: dict[str, Hardware] = Field(description="Chips by id.")
    instances: dict[str, Instance] = Field(description="Instances by id.")
    prices: dict[str, PriceEntry] = Field(description="Prices by id.")

    def price(self, price_id: str) -> PriceEntry:
        try:
            return self.prices[price_id]
        except KeyError:
            raise StudyError(
                f"price.catalog: no price '{price_id}' in the catalog; known: "
                f"{', '.join(sorted(self.prices))}",
                hint="use a known id, or add it to your catalog (costs.catalog)") from None

    def chip(self, hardware_id: str | None) -> Hardware | None:
        return None if hardware_id is None else self.hardware.get(hardware_id)

    def prices_for(self, hardware_id: str) -> list[PriceEntry]:
        return [p for p in self.prices.values() if p.hardware == hardware_id]

    def hardware_problem(self, hardware_id: str) -> str | None:
        """Why ``hardware_id`` is not a catalog entry (with the closest id), or None."""
        if hardware_id in self.hardware:
            return None
        close = difflib.get_close_matches(hardware_id, list(self.hardware), n=1)
        guess = f"did you mean '{close[0]}'? " if close else ""
        return (f"no hardware '{hardware_id}' in the catalog; {guess}known ids: "
                f"{', '.join(sorted(self.hardware))} (acceval catalog lists them; add one "
                "in a costs.catalog file)")


_SECTIONS: dict[str, type[_Model]] = {
    "hardware": Hardware, "instances": Instance, "prices": PriceEntry,
}


def _entries(data: Any, where: str) -> dict[str, dict[str, _Model]]:
    if data is None:
        data = {}
    if not isinstance(data, dict) or set(data) - set(_SECTIONS):
        raise StudyError(f"{where}: a catalog is a mapping with lists {', '.join(_SECTIONS)}",
                         hint="see `acceval catalog` and docs/economics.md for its form")
    out: dict[str, dict[str, _Model]] = {k: {} for k in _SECTIONS}
    for section, model in _SECTIONS.items():
        for i, raw in enumerate(data.get(section) or []):
            try:
                entry = model.model_validate(raw)
            except ValidationError as exc:
                first = exc.errors()[0]
                path = ".".join(str(p) for p in first["loc"])
                raise StudyError(
                    f"{where}: {section}[{i}].{path}: {first['msg']}",
                    hint="fix that entry; the fields are those `acceval catalog` lists"
                ) from None
            out[section][getattr(entry, "id")] = entry  # noqa: B009 - every section has id
    return out


@functools.cache
def _shipped() -> dict[str, dict[str, _Model]]:
    # Parsed once per process: it is package data, and parsing it is most of what checking
    # a study costs. Entries are frozen; callers get fresh dicts (see _builtin).
    merged: dict[str, dict[str, _Model]] = {k: {} for k in _SECTIONS}
    folder = resources.files("acceval") / "data" / "catalog"
    for name in ("hardware.yaml", "prices.yaml"):
        part = _entries(_package_yaml(folder.joinpath(name).read_text("utf-8")), name)
        for k in _SECTIONS:
            merged[k].update(part[k])
    return merged


def _package_yaml(text: str) -> Any:
    """This package's own data, not a user's file: parsed by libyaml when PyYAML has it (5
    against 30 ms for the two catalog files), to the same values as the bounded reader
    (:func:`~acceval.input_files.load_yaml`, what a user's catalog goes through) gives."""
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def _builtin() -> dict[str, dict[str, _Model]]:
    return {k: dict(v) for k, v in _shipped().items()}


def load_catalog(user_file: Path | None = None) -> Catalog:
    """The shipped catalog, overridden or extended by id from ``user_file`` if given."""
    merged = _builtin()
    if user_file is not None:
        p = Path(user_file)
        data = read_yaml(p, where="costs.catalog", what="catalog")
        for k, entries in _entries(data, str(p)).items():
            merged[k].update(entries)
    return Catalog.model_validate(merged)


def load_study_catalog(user_file: str | None, base_dir: Path | None = None) -> Catalog:
    """The catalog a study's ``costs.catalog`` asks for (a path relative to ``base_dir``,
    the study file's folder), or the shipped one."""
    if user_file is None:
        return load_catalog(None)
    path = Path(user_file)
    if not path.is_absolute():
        path = (base_dir or Path.cwd()) / path
    return load_catalog(path)
