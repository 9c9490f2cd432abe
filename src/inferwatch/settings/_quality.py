"""``quality``: drift windows, thresholds and reference profiles; the A/B-test settings."""

from __future__ import annotations

from pydantic import Field, model_validator

from inferwatch.settings._types import Duration, FrozenModel

__all__ = ["AbTestConfig", "QualityConfig"]


class AbTestConfig(FrozenModel):
    """Business A/B tests (``quality.abtest``): significance level and the mSPRT mixing scale."""

    alpha: float = Field(0.05, gt=0, lt=1, description="significance level (p < 0.05)")
    tau: float = Field(0.05, gt=0, le=1, description="mSPRT normal-mixture sd of the effect (rate units)")
    window: Duration = Field(86400.0, description="business collection interval (24 h)")


class QualityConfig(FrozenModel):
    """Model-quality monitoring settings."""

    window: Duration = Field(3600.0, description="drift window (1 h)")
    psi_warning: float = Field(0.1, ge=0)
    psi_review: float = Field(0.25, ge=0)
    psi_rollback: float = Field(0.5, ge=0)
    bins: int = Field(10, ge=2, le=1000, description="PSI bins, cut at reference quantiles")
    psi_epsilon: float = Field(1e-4, gt=0, lt=0.01, description="fraction given to an empty bin")
    alpha: float = Field(0.05, gt=0, lt=1, description="level of the PSI no-drift critical value")
    anomalous_ratio: float = Field(0.05, ge=0, le=1, description="alert above this anomalous ratio")
    low_confidence: float = Field(0.5, ge=0, le=1, description="confidence below this is low")
    profile: str | None = Field(None, description="reference profile JSON (inferwatch profile build)")
    abtest: AbTestConfig = Field(default_factory=AbTestConfig)

    @model_validator(mode="after")
    def _ordered(self) -> QualityConfig:
        if not self.psi_warning <= self.psi_review <= self.psi_rollback:
            raise ValueError("psi_warning <= psi_review <= psi_rollback must hold")
        return self
