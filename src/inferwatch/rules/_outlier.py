"""Peer outliers: which members of a peer group sit far from the group's median.

The statistics are PromQL's own, so the exported rule (``_outlier_promql``) gives
the same alerts in Prometheus: the median is ``quantile(0.5, …)`` (rank
``0.5·(n-1)``, linear interpolation), the MAD is the median of ``|x − median|``,
and a member is an outlier (``mad``) when its distance on the paging side is
more than ``tolerance × 1.4826 × MAD`` *and* more than ``min_deviation``. A MAD
of 0 (identical peers) multiplies to 0, so ``min_deviation`` alone decides then:
no division, and no page for a difference below it. Values that are NaN (a
quantile of no traffic) are not members; a group with fewer than ``min_peers``
members never pages.

``dbscan``: the values, sorted, split into clusters wherever two neighbours are
more than ``eps`` apart (DBSCAN in one dimension, two points to a cluster); when
one cluster holds more than half of the group, every member outside it that is
also ``min_deviation`` from the median on the paging side is an outlier; without
such a majority nothing pages (the group has no normal to compare with).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from inferwatch.model import Labels
from inferwatch.promql import quantile
from inferwatch.rules._template import go_printf
from inferwatch.settings import MAD_SCALE, OutlierSpec

__all__ = ["PEERS_SHOWN", "PeerGroup", "PeerMember", "peer_groups", "tolerance_factor"]

PEERS_SHOWN = 5
"""How many of the other members an alert's ``$peers`` lists (sorted by member name)."""


@dataclass(frozen=True)
class PeerMember:
    """One member's series, value and verdict."""

    labels: Labels
    value: float
    outlier: bool

    def name(self, label: str) -> str:
        """The member's name (its ``member`` label)."""
        return self.labels.get(label, "")


@dataclass(frozen=True)
class PeerGroup:
    """One peer group at one evaluation: its members, median and spread (1.4826 × MAD)."""

    key: tuple[str, ...]
    members: tuple[PeerMember, ...]
    median: float
    spread: float
    judged: bool  # False: under min_peers, nobody is judged

    def others(self, member: PeerMember, label: str, shown: int = PEERS_SHOWN) -> str:
        """The other members' values, ``b=0.12 c=0.13 …`` (the first ``shown`` by name)."""
        rest = sorted((m for m in self.members if m is not member), key=lambda m: m.name(label))
        text = " ".join(f"{m.name(label)}={go_printf('%.3g', m.value)}" for m in rest[:shown])
        return text + (" …" if len(rest) > shown else "")


def peer_groups(spec: OutlierSpec, vector: Sequence[tuple[Labels, float]]) -> list[PeerGroup]:
    """The peer groups of one evaluated vector, each member judged (sorted by group key)."""
    groups: dict[tuple[str, ...], list[tuple[Labels, float]]] = {}
    for labels, value in vector:
        if not math.isnan(value):
            groups.setdefault(tuple(labels.get(n, "") for n in spec.peers_by), []).append((labels, value))
    return [_judge(spec, key, groups[key]) for key in sorted(groups)]


def _judge(spec: OutlierSpec, key: tuple[str, ...], items: list[tuple[Labels, float]]) -> PeerGroup:
    values = [v for _, v in items]
    median = quantile(0.5, values)
    mad = quantile(0.5, [abs(v - median) for v in values])
    judged = len(items) >= spec.min_peers
    far = _far(spec, values, median, mad) if judged else [False] * len(items)
    members = tuple(PeerMember(lab, v, f) for (lab, v), f in zip(items, far, strict=True))
    return PeerGroup(key, members, median, MAD_SCALE * mad, judged)


def _side(spec: OutlierSpec, value: float, median: float) -> float:
    """The distance from the median on the paging side (negative or NaN: the other side)."""
    dev = value - median
    if spec.direction == "above":
        return dev
    if spec.direction == "below":
        return -dev
    return abs(dev)


def _far(spec: OutlierSpec, values: list[float], median: float, mad: float) -> list[bool]:
    sides = [_side(spec, v, median) for v in values]
    if spec.algorithm == "mad":
        # written as the exported PromQL computes it: (tolerance·1.4826) · MAD, one rounding each
        limit = tolerance_factor(spec) * mad
        return [s > limit and s > spec.min_deviation for s in sides]
    normal = _majority_cluster(values, spec.eps or 0.0)
    return [i not in normal and s > spec.min_deviation for i, s in enumerate(sides)]


def tolerance_factor(spec: OutlierSpec) -> float:
    """``tolerance × 1.4826``: what the MAD is multiplied by (the exported rule writes this number)."""
    return spec.tolerance * MAD_SCALE


def _majority_cluster(values: list[float], eps: float) -> set[int]:
    order = sorted(range(len(values)), key=lambda i: values[i])
    clusters: list[list[int]] = [[order[0]]] if order else []
    for prev, cur in pairwise(order):
        if values[cur] - values[prev] <= eps:
            clusters[-1].append(cur)
        else:
            clusters.append([cur])
    best = max(clusters, key=len, default=[])
    # no majority: everything stays normal (no cluster to call the others odd against)
    return set(best) if 2 * len(best) > len(values) else set(range(len(values)))
