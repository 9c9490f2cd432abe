"""``baseline``: defaults for dynamic thresholds (seasonal forecast bands).

One set of defaults serves every series; ``docs/baseline.md`` says how they
were chosen (on half of the NAB files, checked on the other half).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from inferwatch.settings._types import Duration, FrozenModel

__all__ = ["BaselineConfig", "NoveltyConfig", "ProphetConfig", "SeasonalConfig"]


class SeasonalConfig(FrozenModel):
    """The robust seasonal baseline: seasonal medians, a median level, a MAD band."""

    slot: Duration = Field(1800.0, gt=0, description="width of a time-of-day / day-of-week slot")
    days: int = Field(7, ge=1, le=60, description="days of history kept per daily slot")
    weeks: int = Field(3, ge=1, le=12, description="weeks of history kept per weekly slot")
    slot_capacity: int = Field(64, ge=4, le=4096, description="most samples kept per slot")
    level_points: int = Field(144, ge=3, le=1024, description="recent samples in the median level")
    scale_points: int = Field(2016, ge=16, le=8192, description="recent residuals in the MAD scale")
    refresh_points: int = Field(12, ge=1, le=1024, description="samples between scale refreshes")
    band: float = Field(6.0, gt=0, description="band half-width in robust standard deviations")
    tail_quantile: float = Field(
        0.99, gt=0, le=1, description="quantile of recent |residuals| that also bounds the band"
    )
    tail_factor: float = Field(
        1.2, ge=0, description="band half-width at least this times the tail quantile (0: off)"
    )
    clip_residuals: bool = Field(False, description="learn residuals clipped to the band")
    min_history: Duration = Field(172800.0, ge=0, description="history needed before a band exists")
    min_points: int = Field(48, ge=4, description="samples needed before a band exists")
    relative_floor: float = Field(
        0.001, ge=0, description="smallest band half-width as a fraction of |expected|"
    )
    windows: tuple[int, ...] = Field(
        (6, 24), description="also alert when the mean residual of the last N samples leaves its own "
        "band, for each N here (sustained shifts too small for the point band); () is off"
    )
    window_band: float = Field(
        4.0, gt=0, description="window band half-width in robust deviations of the window means"
    )
    window_tail_factor: float = Field(
        1.3, ge=0, description="window band at least this times the tail quantile of window means"
    )
    window_min_points: int = Field(
        576, ge=4, description="window means needed before a window band exists "
        "(at most scale_points are kept: a smaller scale_points lowers it to that)"
    )

    range_horizon: Duration = Field(
        28 * 86400.0, ge=0, description="also alert on a new low or high beyond every value of "
        "this long a past (the long-memory range; slow drifts the band learns away); 0 is off"
    )
    range_exclude: Duration = Field(
        43200.0, ge=0, description="recent time the long-memory range leaves out"
    )
    range_margin: float = Field(
        0.1, ge=0, description="how far beyond the range, as a fraction of it, is anomalous"
    )
    range_min_history: Duration = Field(
        7 * 86400.0, ge=0, description="history needed before the long-memory range applies"
    )
    range_slot: Duration = Field(3600.0, gt=0, description="the range keeps one low/high per slot")

    @model_validator(mode="after")
    def _check(self) -> SeasonalConfig:
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
        return self


class ProphetConfig(FrozenModel):
    """Prophet (optional extra ``inferwatch[prophet]``): refit on a bounded window."""

    history: Duration = Field(7 * 86400.0, gt=0, description="trailing window each fit sees")
    refit_every: Duration = Field(86400.0, gt=0, description="time between refits")
    band: float = Field(6.0, gt=0, description="band half-width in robust residual deviations")
    min_history: Duration = Field(86400.0, ge=0, description="history needed before the first fit")


class NoveltyConfig(FrozenModel):
    """The pattern novelty detector (Fuzzy ART) combined with the band by an anomaly likelihood."""

    enabled: bool = Field(
        False, description="also alert when a series' recent pattern novelty is unlikely for it "
        "(off by default: leave-one-folder-out CV on NAB did not favour it; docs/baseline.md)"
    )
    window: int = Field(8, ge=2, le=64, description="values in one pattern (even)")
    levels: int = Field(10, ge=2, le=256, description="quantisation steps of the normalised values")
    rho: float = Field(0.9, gt=0, lt=1, description="vigilance: the match a known pattern needs")
    categories: int = Field(32, ge=2, le=256, description="most patterns remembered per series")
    short: int = Field(10, ge=1, le=1024, description="raw scores averaged for the likelihood")
    long: int = Field(2016, ge=2, le=100_000, description="span of the average's mean and variance")
    likelihood: float = Field(
        0.9999, gt=0.5, lt=1, description="flag when the average's Gaussian CDF exceeds this"
    )
    min_points: int = Field(288, ge=0, description="points before the detector may flag (warm-up)")
    hold: int = Field(3, ge=1, le=1024, description="points a flag lasts (meets the debounce)")
    use_band: bool = Field(True, description="the band's excess also feeds the raw score")

    @model_validator(mode="after")
    def _check(self) -> NoveltyConfig:
        if self.window % 2:
            raise ValueError(f"novelty window must be even, got {self.window}")
        return self


class BaselineConfig(FrozenModel):
    """Dynamic-baseline defaults: the method, its settings and the alert debounce."""

    method: Literal["seasonal", "prophet"] = Field(
        "seasonal", description="seasonal (built in) or prophet (extra inferwatch[prophet])"
    )
    seasonal: SeasonalConfig = Field(default_factory=SeasonalConfig)
    prophet: ProphetConfig = Field(default_factory=ProphetConfig)
    novelty: NoveltyConfig = Field(default_factory=NoveltyConfig)
    direction: Literal["above", "below", "both"] = Field(
        "both", description="which side of the band is anomalous"
    )
    debounce: int = Field(3, ge=1, description="consecutive anomalous samples before an alert")
    merge_gap: int = Field(
        144, ge=0, description="normal samples an alert bridges before it ends (re-arm)"
    )
    recurrence: int = Field(
        2, ge=0, le=16, description="hold an alert while it stays within the N-th most extreme "
        "of the series' earlier excursions on that side (recurring bursts); 0 is off"
    )
    recurrence_horizon: Duration = Field(
        14 * 86400.0, gt=0, description="how long an excursion is remembered by the recurrence hold"
    )
