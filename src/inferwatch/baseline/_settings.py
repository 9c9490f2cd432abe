"""The baseline's own settings: plain frozen dataclasses, validated without pydantic.

The YAML's ``baseline:`` section is parsed by ``inferwatch.settings`` (package order: baseline
cannot import config); whoever sees both turns it into these with
``BaselineSettings.from_dict(config.baseline.model_dump())``. Defaults and bounds match
the config's models (a test compares them).

>>> s = BaselineSettings.from_dict({"seasonal": {"slot": "1h", "windows": [6]}})
>>> s.seasonal.slot, s.seasonal.windows, s.method
(3600.0, (6,), 'seasonal')
>>> SeasonalSettings(slot=7000.0)
Traceback (most recent call last):
...
ValueError: slot 7000s must divide one day
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from inferwatch.model import format_duration, parse_duration

__all__ = ["BaselineSettings", "NoveltySettings", "ProphetSettings", "SeasonalSettings"]

_T = TypeVar("_T")
_INF = math.inf


def _num(default: float, lo: float = -_INF, hi: float = _INF, *, lo_open: bool = False,
         hi_open: bool = False, duration: bool = False) -> Any:
    """A numeric field with its bounds (``lo_open``: strictly greater) in the field's metadata."""
    return field(default=default, metadata={"lo": lo, "hi": hi, "lo_open": lo_open,
                                            "hi_open": hi_open, "duration": duration})


def _check_bounds(obj: Any) -> None:
    """Coerce (ints to floats, lists to tuples) and check every field's bounds, naming the field."""
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if isinstance(value, list):
            object.__setattr__(obj, f.name, tuple(value))
        if "lo" not in f.metadata:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"{f.name}: expected a number, got {value!r}")
        if isinstance(f.default, float) and isinstance(value, int):
            object.__setattr__(obj, f.name, float(value))
        m = f.metadata
        low_bad = value <= m["lo"] if m["lo_open"] else value < m["lo"]
        high_bad = value >= m["hi"] if m["hi_open"] else value > m["hi"]
        if low_bad or high_bad or (isinstance(value, float) and math.isnan(value)):
            lo = f"{'>' if m['lo_open'] else '>='} {m['lo']:g}" if m["lo"] > -_INF else ""
            hi = f"{'<' if m['hi_open'] else '<='} {m['hi']:g}" if m["hi"] < _INF else ""
            raise ValueError(f"{f.name} must be {' and '.join(x for x in (lo, hi) if x)}, "
                             f"got {value!r}")


def _from_dict(cls: type[_T], data: Mapping[str, Any]) -> _T:
    """``cls`` from plain data (durations as seconds or Prometheus text); unknown keys rejected."""
    known = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise ValueError(f"unknown {cls.__name__} settings: {', '.join(unknown)}")
    kwargs = {}
    for name, value in data.items():
        if known[name].metadata.get("duration") and isinstance(value, str):
            value = parse_duration(value)
        kwargs[name] = value
    return cls(**kwargs)


def _to_dict(obj: Any) -> dict[str, Any]:
    """JSON-ready: durations as Prometheus text, tuples as lists (the saved states' format)."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if dataclasses.is_dataclass(value):
            value = _to_dict(value)
        elif f.metadata.get("duration"):
            value = format_duration(value)
        elif isinstance(value, tuple):
            value = list(value)
        out[f.name] = value
    return out


@dataclass(frozen=True, slots=True)
class SeasonalSettings:
    """The robust seasonal baseline: seasonal medians, a median level, a MAD band."""

    slot: float = _num(1800.0, 0, lo_open=True, duration=True)  # a time-of-day / weekday slot
    days: int = _num(7, 1, 60)  # days of history kept per daily slot
    weeks: int = _num(3, 1, 12)  # weeks of history kept per weekly slot
    slot_capacity: int = _num(64, 4, 4096)  # most samples kept per slot
    level_points: int = _num(144, 3, 1024)  # recent samples in the median level
    scale_points: int = _num(2016, 16, 8192)  # recent residuals in the MAD scale
    refresh_points: int = _num(12, 1, 1024)  # samples between scale refreshes
    band: float = _num(6.0, 0, lo_open=True)  # band half-width in robust standard deviations
    tail_quantile: float = _num(0.99, 0, 1, lo_open=True)  # of recent |residuals|, bounds the band
    tail_factor: float = _num(1.2, 0)  # band at least this times the tail quantile (0: off)
    clip_residuals: bool = False  # learn residuals clipped to the band
    min_history: float = _num(172800.0, 0, duration=True)  # history needed before a band exists
    min_points: int = _num(48, 4)  # samples needed before a band exists
    relative_floor: float = _num(0.001, 0)  # smallest half-width as a fraction of |expected|
    windows: tuple[int, ...] = (6, 24)  # window-mean bands, N samples each; () is off
    window_band: float = _num(4.0, 0, lo_open=True)  # in robust deviations of the window means
    window_tail_factor: float = _num(1.3, 0)  # at least this times the window means' tail quantile
    window_min_points: int = _num(576, 4)  # window means needed before a window band exists
    range_horizon: float = _num(28 * 86400.0, 0, duration=True)  # long-memory range; 0 is off
    range_exclude: float = _num(43200.0, 0, duration=True)  # recent time the range leaves out
    range_margin: float = _num(0.1, 0)  # how far beyond the range (a fraction of it) is anomalous
    range_min_history: float = _num(7 * 86400.0, 0, duration=True)  # before the range applies
    range_slot: float = _num(3600.0, 0, lo_open=True, duration=True)  # one low/high per slot

    def __post_init__(self) -> None:
        _check_bounds(self)
        if self.slot > 86400.0 or 86400.0 % self.slot:
            raise ValueError(f"slot {self.slot:g}s must divide one day")
        if self.min_points > self.scale_points:
            raise ValueError("min_points cannot exceed scale_points")
        if any(not 2 <= w <= 1024 for w in self.windows):
            raise ValueError(f"windows must each be 2..1024 samples, got {list(self.windows)}")
        if self.range_horizon and self.range_horizon <= self.range_exclude:
            raise ValueError("range_horizon must exceed range_exclude (or be 0: off)")
        if self.range_horizon / self.range_slot > 8784:
            raise ValueError("range_horizon spans more than 8784 range slots; widen range_slot")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SeasonalSettings:
        """From plain data (``to_dict``'s output, or the config's ``model_dump()``)."""
        return _from_dict(cls, data)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (durations as Prometheus text)."""
        return _to_dict(self)


@dataclass(frozen=True, slots=True)
class ProphetSettings:
    """Prophet (optional extra ``inferwatch[prophet]``): refit on a bounded window."""

    history: float = _num(7 * 86400.0, 0, lo_open=True, duration=True)  # each fit's window
    refit_every: float = _num(86400.0, 0, lo_open=True, duration=True)  # time between refits
    band: float = _num(6.0, 0, lo_open=True)  # band half-width in robust residual deviations
    min_history: float = _num(86400.0, 0, duration=True)  # history needed before the first fit

    def __post_init__(self) -> None:
        _check_bounds(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ProphetSettings:
        """From plain data (``to_dict``'s output, or the config's ``model_dump()``)."""
        return _from_dict(cls, data)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (durations as Prometheus text)."""
        return _to_dict(self)


@dataclass(frozen=True, slots=True)
class NoveltySettings:
    """The pattern novelty detector (Fuzzy ART) combined with the band by an anomaly likelihood."""

    enabled: bool = False  # off by default (docs/baseline.md)
    window: int = _num(8, 2, 64)  # values in one pattern (even)
    levels: int = _num(10, 2, 256)  # quantisation steps of the normalised values
    rho: float = _num(0.9, 0, 1, lo_open=True, hi_open=True)  # vigilance
    categories: int = _num(32, 2, 256)  # most patterns remembered per series
    short: int = _num(10, 1, 1024)  # raw scores averaged for the likelihood
    long: int = _num(2016, 2, 100_000)  # span of the average's mean and variance
    likelihood: float = _num(0.9999, 0.5, 1, lo_open=True, hi_open=True)  # flag threshold
    min_points: int = _num(288, 0)  # points before the detector may flag (warm-up)
    hold: int = _num(3, 1, 1024)  # points a flag lasts (meets the debounce)
    use_band: bool = True  # the band's excess also feeds the raw score

    def __post_init__(self) -> None:
        _check_bounds(self)
        if self.window % 2:
            raise ValueError(f"novelty window must be even, got {self.window}")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> NoveltySettings:
        """From plain data (``to_dict``'s output, or the config's ``model_dump()``)."""
        return _from_dict(cls, data)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return _to_dict(self)


@dataclass(frozen=True, slots=True)
class BaselineSettings:
    """Dynamic-baseline defaults: the method, its settings and the alert debounce."""

    method: Literal["seasonal", "prophet"] = "seasonal"
    seasonal: SeasonalSettings = field(default_factory=SeasonalSettings)
    prophet: ProphetSettings = field(default_factory=ProphetSettings)
    novelty: NoveltySettings = field(default_factory=NoveltySettings)
    direction: Literal["above", "below", "both"] = "both"  # which side of the band is anomalous
    debounce: int = _num(3, 1)  # consecutive anomalous samples before an alert
    merge_gap: int = _num(144, 0)  # normal samples an alert bridges before it ends (re-arm)
    recurrence: int = _num(2, 0, 16)  # hold alerts within the N-th most extreme excursion; 0 off
    recurrence_horizon: float = _num(14 * 86400.0, 0, lo_open=True, duration=True)

    def __post_init__(self) -> None:
        for name, cls in (("seasonal", SeasonalSettings), ("prophet", ProphetSettings),
                          ("novelty", NoveltySettings)):
            value = getattr(self, name)
            if isinstance(value, Mapping):  # a nested section as plain data, as the YAML writes it
                object.__setattr__(self, name, cls.from_dict(value))
        _check_bounds(self)
        if self.method not in ("seasonal", "prophet"):
            raise ValueError(f"method must be seasonal or prophet, got {self.method!r}")
        if self.direction not in ("above", "below", "both"):
            raise ValueError(f"direction must be above, below or both, got {self.direction!r}")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BaselineSettings:
        """From plain data, e.g. ``BaselineSettings.from_dict(config.baseline.model_dump())``."""
        return _from_dict(cls, data)  # nested sections: __post_init__

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (durations as Prometheus text)."""
        return _to_dict(self)
