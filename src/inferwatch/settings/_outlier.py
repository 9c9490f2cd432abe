"""``outlier:`` — a rule that compares each member of a peer group with its peers.

An expression gives one series per member (a replica, a GPU, a device);
``peers_by`` names the labels that make a peer group, ``member`` the label that
names a member. A member pages when it sits far from its group's median::

    rules:
      rules:
        - name: ReplicaSlow
          dimension: service
          tier: P1
          outlier:
            expr: 'histogram_quantile(0.99, sum by (instance, model, le)
                   (rate(inferwatch_request_duration_seconds_bucket[5m])))'
            peers_by: [model]
            member: instance
            algorithm: mad          # or dbscan (with eps)
            tolerance: 3            # scaled MADs (1.4826 x MAD)
            min_peers: 3
            min_deviation: 0.05     # in the expression's unit
          for: 2m
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from inferwatch.model import is_valid_label_name
from inferwatch.settings._types import FrozenModel

__all__ = ["MAD_SCALE", "OutlierSpec"]

MAD_SCALE = 1.4826
"""The MAD of normally distributed values times this is their standard deviation (1/Φ⁻¹(3/4))."""


class OutlierSpec(FrozenModel):
    """A peer-outlier condition: a member far from its group's median pages."""

    expr: str = Field(min_length=1, description="PromQL giving one series per member")
    peers_by: tuple[str, ...] = Field(min_length=1, description="labels that define a peer group")
    member: str = Field(description="the label that names a member (instance, gpu, device)")
    algorithm: Literal["mad", "dbscan"] = "mad"
    tolerance: float = Field(
        3.0, gt=0, allow_inf_nan=False,
        description="mad: how many scaled MADs (1.4826 x MAD) from the median is an outlier")
    eps: float | None = Field(
        None, gt=0, allow_inf_nan=False,
        description="dbscan: the largest gap, in the expression's unit, inside one cluster")
    min_peers: int = Field(3, ge=3, le=100_000, description="groups with fewer members never page")
    min_deviation: float = Field(
        ge=0, allow_inf_nan=False,
        description="the least distance from the median that pages, in the expression's unit "
                    "(identical peers have a MAD of 0: this keeps a tiny difference from paging; 0: off)")
    direction: Literal["above", "below", "both"] = Field(
        "both", description="which side of the median pages (latency: above; confidence: below)")

    @field_validator("peers_by")
    @classmethod
    def _peers_by(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        for n in v:
            if not is_valid_label_name(n) or n == "__name__":
                raise ValueError(f"peers_by: invalid label name {n!r}")
        if len(set(v)) != len(v):
            raise ValueError(f"peers_by names a label twice: {list(v)}")
        return v

    @field_validator("member")
    @classmethod
    def _member(cls, v: str) -> str:
        if not is_valid_label_name(v) or v == "__name__":
            raise ValueError(f"member: invalid label name {v!r}")
        return v

    @field_validator("expr")
    @classmethod
    def _expr(cls, v: str) -> str:
        if "`" in v:  # the exported annotations quote the expression in a Go raw string
            raise ValueError("expr: write strings in double quotes, not backticks")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> OutlierSpec:
        if self.member in self.peers_by:
            raise ValueError(f"member {self.member!r} cannot also be in peers_by (a group of one)")
        if self.algorithm == "dbscan" and self.eps is None:
            raise ValueError("algorithm dbscan needs eps (the largest gap inside a cluster, "
                             "in the expression's unit)")
        if self.algorithm == "mad" and self.eps is not None:
            raise ValueError("eps is dbscan's setting: with algorithm mad use tolerance")
        return self
