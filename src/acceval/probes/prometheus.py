"""Probes that scrape a Prometheus ``/metrics`` endpoint over HTTP, so that a remote server
or accelerator is seen, not only the host acceval runs on.

- :class:`TelemetryProbe`: a serving engine's own state (running, waiting, KV-cache use,
  prefix-cache hits, preemptions, tokens), mapped to one vocabulary
  (:mod:`acceval.telemetry`). Its samples are named ``telemetry.<metric>`` so that nothing
  it reads is ever counted as the target's energy.
- :class:`DcgmProbe`: NVIDIA's DCGM exporter as an energy probe (``energy.probe: dcgm``):
  per GPU, energy from ``DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION`` (mJ since boot, taken
  relative to the first scrape) and power from ``DCGM_FI_DEV_POWER_USAGE``, at the board
  (device, L0), like NVML read locally.

Each scrape is one GET with a short timeout from the sampler's thread; a scrape that fails
is counted and the probe carries on.
"""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field

from acceval.probes.base import Sample, rel_ns
from acceval.telemetry import CANONICAL, Scrape, parse_metrics
from acceval.telemetry.parse import parse_page

#: The most bytes read from one scrape (a vLLM v1 /metrics is ~50-60 KB; histograms per model).
MAX_SCRAPE_BYTES = 4 * 2**20
TELEMETRY_PREFIX = "telemetry."


def fetch(url: str, timeout_s: float) -> str:
    """The text at ``url``; raises OSError (URLError included) or ValueError."""
    req = urllib.request.Request(url, headers={"Accept": "text/plain", "User-Agent": "acceval"})
    with urllib.request.urlopen(req, timeout=timeout_s) as resp:
        body = resp.read(MAX_SCRAPE_BYTES + 1)
    if len(body) > MAX_SCRAPE_BYTES:
        raise ValueError(f"more than {MAX_SCRAPE_BYTES // 2**20} MiB")
    return bytes(body).decode("utf-8", errors="replace")


@dataclass(slots=True)
class ScrapeStats:
    """What the scrapes of one probe saw, for the run log."""

    url: str
    source: str | None = None
    scrapes: int = 0
    failures: int = 0
    last_error: str | None = None
    unmapped: list[str] = field(default_factory=list)
    first_ns: int | None = None   # run-relative time of the first and last good scrape
    last_ns: int | None = None
    interval_s: float | None = None  # the scrape interval asked for


class _Scraper:
    name = "metrics"

    def __init__(self, url: str, *, interval_s: float = 1.0, timeout_s: float = 2.0) -> None:
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"metrics URL must be http(s), got {url!r}")
        self.url = url
        self.interval_s = interval_s
        self.timeout_s = timeout_s
        self.stats = ScrapeStats(url, interval_s=interval_s)
        self._t0_ns = 0
        self._next = 0.0

    def available(self) -> tuple[bool, str]:
        try:
            scrape = parse_page(fetch(self.url, self.timeout_s))
        except (OSError, ValueError) as exc:
            return False, f"{self.url} did not answer ({_why(exc)})"
        if scrape.error:
            return False, f"{self.url}: {scrape.error}"
        return True, ""

    def start(self, t0_ns: int) -> None:
        self._t0_ns = t0_ns

    def sample(self) -> list[Sample]:
        now = time.monotonic()
        if now < self._next:  # the sampler ticks faster than a scrape is worth
            return []
        self._next = now + self.interval_s
        return self._scrape()

    def stop(self) -> list[Sample]:
        return self._scrape()

    def _scrape(self) -> list[Sample]:
        t = rel_ns(self._t0_ns)
        st = self.stats
        try:
            scrape = parse_page(fetch(self.url, self.timeout_s))
        except (OSError, ValueError) as exc:
            st.failures += 1
            st.last_error = _why(exc)
            return []
        if scrape.error:
            st.failures += 1
            st.last_error = scrape.error
            return []
        st.scrapes += 1
        st.first_ns = t if st.first_ns is None else st.first_ns
        st.last_ns = t
        st.source = scrape.source or st.source
        st.unmapped = sorted(set(st.unmapped) | set(scrape.unmapped))
        return self._samples(t, scrape)

    def _samples(self, t: int, scrape: Scrape) -> list[Sample]:
        raise NotImplementedError


class TelemetryProbe(_Scraper):
    """A serving engine's ``/metrics``: every canonical reading, as ``telemetry.<name>``."""

    name = "metrics"

    def _samples(self, t: int, scrape: Scrape) -> list[Sample]:
        return [Sample(t, self.name, TELEMETRY_PREFIX + r.metric, r.value,
                       CANONICAL[r.metric].unit, r.device) for r in scrape.readings]


class ExporterProbe(TelemetryProbe):
    """An accelerator exporter beside the server's own /metrics (``telemetry.exporter_url``):
    a DCGM exporter, neuron-monitor's Prometheus companion or its JSON report. Its readings
    are telemetry too (never energy), kept under a probe name of their own."""

    name = "exporter"


class DcgmProbe(_Scraper):
    """Energy and power per GPU from a DCGM exporter (device boundary, L0)."""

    name = "dcgm"

    def __init__(self, url: str, *, devices: list[int] | None = None,
                 interval_s: float = 1.0, timeout_s: float = 2.0) -> None:
        super().__init__(url, interval_s=interval_s, timeout_s=timeout_s)
        self.devices = None if devices is None else {f"gpu{i}" for i in devices}
        self._e0: dict[str, float] = {}

    def available(self) -> tuple[bool, str]:
        ok, why = super().available()
        if not ok:
            return ok, why
        scrape = parse_metrics(fetch(self.url, self.timeout_s))
        if not any(r.metric in ("energy_j", "power_w") for r in scrape.readings):
            return False, (f"{self.url} publishes neither DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION "
                           "nor DCGM_FI_DEV_POWER_USAGE; add them to the exporter's counters")
        return True, ""

    def _samples(self, t: int, scrape: Scrape) -> list[Sample]:
        out = []
        for r in scrape.readings:
            if self.devices is not None and r.device not in self.devices:
                continue
            if r.metric == "energy_j":
                e0 = self._e0.setdefault(r.device, r.value)
                out.append(Sample(t, self.name, "energy_j", r.value - e0, "J", r.device))
            elif r.metric == "power_w":
                out.append(Sample(t, self.name, "power_w", r.value, "W", r.device))
            elif r.metric == "accelerator_util":
                out.append(Sample(t, self.name, "gpu_util_pct", 100 * r.value, "%", r.device))
        return out


def _why(exc: BaseException) -> str:
    if isinstance(exc, urllib.error.HTTPError):
        return f"HTTP {exc.code}"
    if isinstance(exc, urllib.error.URLError):
        return str(exc.reason)
    return str(exc) or type(exc).__name__


__all__ = ["MAX_SCRAPE_BYTES", "TELEMETRY_PREFIX", "DcgmProbe", "ExporterProbe", "ScrapeStats",
           "TelemetryProbe", "fetch"]
