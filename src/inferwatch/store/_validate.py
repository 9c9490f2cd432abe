"""Checks a batch passes before a store writes any of it."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from itertools import chain, repeat
from operator import attrgetter, eq, itemgetter

from inferwatch._exceptions import InputError
from inferwatch.model import METRIC_NAME_LABEL, Labels, is_valid_label_name, is_valid_metric_name

__all__ = ["check_labels", "check_new_labels", "check_time"]


# Names already found valid: a new series mostly repeats known metric and label names, so
# a set lookup replaces a regex match. Bounded, so hostile input cannot grow it forever.
_VALID_NAMES: set[str] = {METRIC_NAME_LABEL}
_VALID_METRICS: set[str] = set()
_MAX_CACHED = 65536


def check_labels(labels: Labels) -> None:
    """Raise ``InputError`` unless ``labels`` has a valid metric name and label names."""
    if type(labels) is not Labels and not isinstance(labels, Labels):
        raise InputError(f"a sample's labels must be inferwatch.model.Labels, got {type(labels).__name__}")
    metric = labels.name
    if metric in _VALID_METRICS and _VALID_NAMES.issuperset(labels.keys()):
        return  # the usual case: every name seen and found valid before
    if metric not in _VALID_METRICS:
        if not is_valid_metric_name(metric):
            raise InputError(f"invalid metric name {metric!r} in series {labels}")
        if len(_VALID_METRICS) < _MAX_CACHED:
            _VALID_METRICS.add(metric)
    for name, _ in labels.items_tuple:
        if name in _VALID_NAMES or name == METRIC_NAME_LABEL:
            continue
        if not is_valid_label_name(name):
            raise InputError(f"invalid label name {name!r} in series {labels}")
        if name.startswith("__"):
            raise InputError(f"label name {name!r} is reserved (starts with __) in series {labels}")
        if len(_VALID_NAMES) < _MAX_CACHED:
            _VALID_NAMES.add(name)


_items, _first, _second = attrgetter("items_tuple"), itemgetter(0), itemgetter(1)


def check_new_labels(sets: Sequence[Labels], pairs: Iterable[tuple[str, str]] | None = None,
                     firsts: list[tuple[str, str]] | None = None) -> None:
    """``check_labels`` for each of ``sets`` (the series a batch creates; ``pairs``: their distinct
    pairs, and ``firsts`` the distinct first pairs of the sets, none empty, when the caller has them).

    The usual batch, the metric name first in each set, is checked in a few passes that run in C:
    the metric and label names it brings are each checked once (and remembered). Any other batch,
    or one with an invalid name, goes through one ``check_labels`` per set, which names the first
    invalid one.
    """
    items = list(map(_items, sets)) if firsts is None or pairs is None else [()]
    if firsts is None and all(items):
        firsts = list(map(_first, items))
    if firsts is not None and all(map(eq, map(_first, firsts), repeat(METRIC_NAME_LABEL))):
        metrics = set(map(_second, firsts)).difference(_VALID_METRICS)
        names = ({k for k, _ in pairs} if pairs is not None
                 else set(map(_first, chain.from_iterable(items)))).difference(_VALID_NAMES)
        if _all_valid(metrics, names):
            return
    for labels in sets:
        check_labels(labels)


def _all_valid(metrics: set[str], names: set[str]) -> bool:
    """Whether the new ``metrics`` and label ``names`` are valid (then remembered, up to the bound)."""
    if not all(map(is_valid_metric_name, metrics)) or not all(map(is_valid_label_name, names)):
        return False
    if any(n.startswith("__") for n in names):
        return False
    if len(_VALID_METRICS) + len(metrics) <= _MAX_CACHED:
        _VALID_METRICS.update(metrics)
    if len(_VALID_NAMES) + len(names) <= _MAX_CACHED:
        _VALID_NAMES.update(names)
    return True


def check_time(t: float, labels: Labels) -> float:
    """Return ``t`` as a float; raise ``InputError`` if it is not a finite number."""
    try:
        ft = float(t)
    except (TypeError, ValueError):
        raise InputError(f"timestamp {t!r} of series {labels} is not a number") from None
    if not math.isfinite(ft):
        raise InputError(f"timestamp {t!r} of series {labels} is not finite")
    return ft


def check_value(v: float, labels: Labels) -> float:
    """Return ``v`` as a float; raise ``InputError`` if it is not a number."""
    try:
        return float(v)
    except (TypeError, ValueError):
        raise InputError(f"value {v!r} of series {labels} is not a number") from None
