"""``slos`` and ``slo_files``: service-level objectives (``inferwatch.slo`` turns them into rules).

A shorthand declares an objective on what the SDK already records::

    slos:
      - {service: ranker, type: availability, objective: 99.9}        # non-5xx over all requests
      - {service: ranker, type: latency, objective: 99, threshold: 0.5} # requests under 500 ms
      - {service: chat, type: time_to_first_token, objective: 95, threshold: 1}
    slo_files:
      - slos/payments.yaml                       # a Sloth prometheus/v1 spec, read as it is
      - {path: slos/search.yaml, period: 28d}

A latency threshold must be a bucket boundary of its histogram (``le``): the
share of requests under it is then exact, not interpolated.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, field_validator, model_validator

from inferwatch.model import Tier, is_valid_label_name, parse_matchers
from inferwatch.settings._types import Duration, FrozenModel

__all__ = ["DEFAULT_MIN_EVENTS", "PERIODS", "TTFT_BUCKETS", "SloFileEntry", "SloFileRef", "SloSpec",
           "SloTiers", "check_thresholds"]

DAY = 86400.0
PERIODS: tuple[float, ...] = (30 * DAY, 28 * DAY)
# Fewer events than this in an alert's long window raise nothing: 3 failures out of 5
# requests are 60 % errors but say little about a month's budget (docs/slo.md).
DEFAULT_MIN_EVENTS = 100
# The SDK's time-to-first-token boundaries (OpenTelemetry GenAI; sdk/_generation.py holds
# the same tuple and a test keeps both equal: config cannot import the SDK).
TTFT_BUCKETS: tuple[float, ...] = (
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0)
_SLO_NAME = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9_-]*$")


class SloTiers(FrozenModel):
    """Which tier each kind of SLO alert gets: fast page P0, slow page P1, ticket P2."""

    fast_page: Tier = Field(Tier.P0, description="1h and 5m windows burning over 14.4x")
    slow_page: Tier = Field(Tier.P1, description="6h and 30m windows burning over 6x")
    ticket: Tier = Field(Tier.P2, description="1d and 2h over 3x, or 3d and 6h over 1x")


class _SloCommon(FrozenModel):
    period: Duration = Field(30 * DAY, description="the SLO's time window: 30d (default) or 28d")
    min_events: int = Field(
        DEFAULT_MIN_EVENTS, ge=0,
        description="events an alert's long window must hold before it can fire (0: no guard)")
    tiers: SloTiers = Field(default_factory=SloTiers)

    @field_validator("period")
    @classmethod
    def _period(cls, v: float) -> float:
        if v not in PERIODS:
            raise ValueError(f"period must be 30d or 28d (the windows and factors are set for those), "
                             f"got {v:g}s")
        return v


class SloSpec(_SloCommon):
    """An objective on the SDK's own metrics for one service (availability, latency, TTFT)."""

    service: str = Field(min_length=1, description="the service label the SDK records")
    type: Literal["availability", "latency", "time_to_first_token"]
    name: str = Field("", description="the SLO's name (sloth_slo); default: the type (with the threshold)")
    objective: float = Field(gt=0, lt=100, description="percent of good events, e.g. 99.9")
    threshold: float | None = Field(
        None, gt=0, description="latency and time_to_first_token: seconds, a bucket boundary")
    matchers: str = Field("", description='extra label matchers, e.g. route="/predict"')
    description: str = ""
    alert_name: str = Field("", description="alert name prefix; default: from service and name")
    labels: dict[str, str] = Field(default_factory=dict, description="added to every SLO series")
    downtime: Literal["auto", "probe", "up", "none"] = Field(
        "auto", description="availability: where the time the service was unreachable is read (auto: its "
        "probes' probe_success when a probe carries its service label, else the targets' up)")

    @field_validator("matchers")
    @classmethod
    def _matchers(cls, v: str) -> str:
        if v.strip():
            parse_matchers(v)
        return v.strip()

    @field_validator("labels")
    @classmethod
    def _labels(cls, v: dict[str, str]) -> dict[str, str]:
        bad = [k for k in v if not is_valid_label_name(k) or k.startswith(("__", "sloth_"))]
        if bad:
            raise ValueError(f"invalid label names {bad} (sloth_* are set by inferwatch)")
        return v

    @model_validator(mode="after")
    def _threshold(self) -> SloSpec:
        needs = self.type != "availability"
        if needs and self.threshold is None:
            raise ValueError(f"a {self.type} SLO needs threshold (seconds, a bucket boundary)")
        if not needs and self.threshold is not None:
            raise ValueError("an availability SLO takes no threshold")
        if needs and "downtime" in self.model_fields_set:
            raise ValueError(f"downtime applies to availability SLOs, not {self.type}")
        if not _SLO_NAME.match(self.slo_name) or not _SLO_NAME.match(self.service):
            raise ValueError(f"service {self.service!r} and name {self.slo_name!r} must be letters, "
                             "digits, '-' or '_'")
        return self

    @property
    def slo_name(self) -> str:
        """``name``, else the type (latency: ``latency-500ms``-like, from the threshold)."""
        if self.name:
            return self.name
        if self.threshold is None:
            return self.type.replace("_", "-")
        ms = self.threshold * 1000
        return f"{self.type.replace('_', '-')}-{ms:g}ms"


class SloFileRef(_SloCommon):
    """A Sloth ``prometheus/v1`` spec file, with the settings Sloth takes on its command line."""

    path: str = Field(min_length=1, description="relative paths: from the config file's directory")


def _file_ref(value: Any) -> Any:
    return {"path": value} if isinstance(value, str) else value


# ``slo_files`` entries: a path, or a mapping with ``path`` and the settings.
SloFileEntry = Annotated[SloFileRef, BeforeValidator(_file_ref)]


def check_thresholds(slos: tuple[SloSpec, ...], buckets: tuple[float, ...]) -> None:
    """Raise ``ValueError`` naming the SLO: a threshold off its histogram's boundaries, an id twice."""
    for i, s in enumerate(slos):
        if s.threshold is None:
            continue
        bounds = buckets if s.type == "latency" else TTFT_BUCKETS
        source = "sdk.buckets" if s.type == "latency" else "the SDK's time-to-first-token buckets"
        if not any(abs(b - s.threshold) <= 1e-12 * max(1.0, b) for b in bounds):
            raise ValueError(
                f"slos[{i}] ({s.service}/{s.slo_name}): threshold {s.threshold:g} is not a bucket "
                f"boundary of the histogram; choose one of {', '.join(f'{b:g}' for b in bounds)} "
                f"({source})")

    ids = [f"{s.service}-{s.slo_name}" for s in slos]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise ValueError(f"slos: SLO {twice[0]!r} (service-name) is declared twice; give one a name")
