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

``change:`` adds each member's own history to the peer test: a member pages when
it moved away from its peers abruptly *and stayed* (every value, or ``share`` of
the values, of the last ``window`` is ``tolerance`` group spreads past its median
over the ``before`` span just before), which a noise excursion (gradual) and a spike (shorter than
``window``) do not; it stays an outlier while it is ``tolerance`` (the rule's)
spreads from the group's median. The spread is the group's scaled MAD averaged
over ``spread_over``. It has no PromQL form (it keeps state per member).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from inferwatch.model import is_valid_label_name
from inferwatch.settings._types import Duration, FrozenModel

__all__ = ["MAD_SCALE", "OutlierChange", "OutlierSpec"]

MAD_SCALE = 1.4826
"""The MAD of normally distributed values times this is their standard deviation (1/Φ⁻¹(3/4))."""


class OutlierChange(FrozenModel):
    """The member's own history next to the peer test: an abrupt move away from the peers that stays."""

    window: Duration = Field(
        210.0, gt=0, description="how long every value must stay moved (longer than a spike)")
    before: Duration = Field(
        90.0, gt=0, description="the member's level before the window: its median over this span")
    tolerance: float = Field(
        2.75, gt=0, allow_inf_nan=False,
        description="the least move from that level, in the group's spreads (scaled MAD, averaged)")
    spread_over: Duration = Field(
        3600.0, gt=0, description="the time constant of the group's averaged spread")
    share: float = Field(
        1.0, gt=0, le=1, allow_inf_nan=False,
        description="the least share of the window's values that must have moved (1: every one; "
                    "0.85 of nine values: eight, so one noisy value does not undo a step)")


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
    change: OutlierChange | None = Field(
        None, description="mad only: page on an abrupt, lasting move away from the peers; tolerance is "
                          "then in the group's averaged spreads and keeps a paged member firing")

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
        if self.algorithm == "dbscan" and self.change is not None:
            raise ValueError("change works with algorithm mad (it measures in the group's spread)")
        return self
