"""One scrape of a ``/metrics`` text, through prometheus-client's exposition-format parser,
into canonical readings (:mod:`acceval.telemetry.names`). Only the lines of mapped families
reach the parser (:mod:`acceval.telemetry.sieve`): a scrape must not hold the interpreter
the load generator stamps with."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field

from acceval.telemetry.names import CANONICAL, FAMILIES, Mapping, source_of
from acceval.telemetry.sieve import sieve


@dataclass(frozen=True, slots=True)
class Reading:
    metric: str       # a CANONICAL name
    device: str       # "" for the server as a whole; gpu0, neuroncore3, ...
    value: float      # in the canonical unit
    family: str       # the server's own name, for provenance


@dataclass(slots=True)
class Scrape:
    readings: list[Reading] = field(default_factory=list)
    source: str | None = None                            # vllm, sglang, dcgm, ...
    unmapped: list[str] = field(default_factory=list)    # families it does not know
    error: str | None = None                             # the text could not be parsed


def _mapping(sample_name: str, family: str) -> tuple[str, Mapping] | None:
    for name in (sample_name, sample_name.removesuffix("_total"), family):
        m = FAMILIES.get(name)
        if m is not None:
            return name, m
    return None


def _value(raw: float, m: Mapping) -> float:
    if m.bits:
        return 1.0 if math.isfinite(raw) and int(raw) & m.bits else 0.0
    return raw * m.scale


def parse_page(text: str) -> Scrape:
    """A scraped page: Prometheus text, or neuron-monitor's JSON report (what it writes to
    stdout, or the file its Prometheus companion reads), told apart by the first character."""
    if text.lstrip().startswith("{"):
        from acceval.telemetry.neuron_report import parse_neuron_report

        return parse_neuron_report(text)
    return parse_metrics(text)


def parse_metrics(text: str, *, whole: bool = False) -> Scrape:
    """The canonical readings in one exposition text. Several series of one canonical
    metric on the same device (one per model, say) are combined as that metric says (sum or
    mean); NaN and infinite values are left out. ``whole`` parses every line, the families
    acceval does not map included (the reference the sieve is tested against)."""
    from prometheus_client.parser import text_string_to_metric_families

    out = Scrape()
    if not whole:
        sieved = sieve(text, FAMILIES)
        out.unmapped = sieved.unmapped
        if sieved.bad_line is not None:
            out.error = f"not Prometheus text format: line {sieved.bad_line[:80]!r}"
            return out
        text = sieved.text
    groups: dict[tuple[str, str], list[float]] = defaultdict(list)
    families: dict[tuple[str, str], str] = {}
    known: set[str] = set()
    try:
        for fam in text_string_to_metric_families(text):
            mapped = False
            for s in fam.samples:
                if s.name.endswith("_created"):
                    continue
                hit = _mapping(s.name, fam.name)
                if hit is None:
                    continue
                name, m = hit
                mapped = True
                if any(s.labels.get(k) != v for k, v in m.where):
                    continue
                known.add(name)
                value = _value(float(s.value), m)
                if not math.isfinite(value):
                    continue
                device = ""
                if m.device_label:
                    label = s.labels.get(m.device_label, "")
                    device = f"{m.device_label}{label}" if label else ""
                groups[(m.canonical, device)].append(value)
                families[(m.canonical, device)] = name
            if not mapped:
                out.unmapped.append(fam.name)
    except ValueError as exc:  # a line that is not the exposition format
        out.error = f"not Prometheus text format: {exc}"
    for (metric, device), values in groups.items():
        combine = CANONICAL[metric].combine
        value = sum(values) if combine == "sum" else sum(values) / len(values)
        out.readings.append(Reading(metric, device, value, families[(metric, device)]))
    out.source = source_of(known)
    return out


__all__ = ["Reading", "Scrape", "parse_metrics", "parse_page"]
