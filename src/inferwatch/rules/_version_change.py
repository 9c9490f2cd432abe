"""A model or prompt version change behind a score drop, with the mean score before and after it.

A ``GenerationQualityDrop`` compares per (service, route, score name), across models and
versions, because the swap is what must be caught. ``version_change`` reads the score
histogram's ``_count`` and ``_sum`` series of that (service, route, name) over the last
day from the store, groups them by (model, version, prompt_version), takes the group that
appeared last as the new version and the one that scored most before it as the old, and
returns both means with their sample counts. Counters count from zero where a series began
inside the window (a new version's first scrape included); a counter reset in the window
undercounts (not corrected).

>>> import numpy as np
>>> from inferwatch.model import Labels, Sample
>>> from inferwatch.store import MemoryStore
>>> store = MemoryStore()
>>> def add(model, t, n, s):
...     base = dict(service="chat", route="/r", name="judge", model=model, version="v1", prompt_version="p1")
...     store.append([Sample(Labels.of("inferwatch_generation_score_count", **base), t, n),
...                   Sample(Labels.of("inferwatch_generation_score_sum", **base), t, s)])
>>> for i in range(1, 5): add("m1", 600.0 * i, 100.0 * i, 85.0 * i)
>>> for i in range(1, 3): add("m2", 2400.0 + 600.0 * i, 30.0 * i, 18.0 * i)
>>> change = version_change(store, {"service": "chat", "route": "/r", "name": "judge"}, 3600.0)
>>> change.note("judge")
'model m1 → m2 at 1970-01-01 00:50 UTC; judge mean 0.85 (n=400) before, 0.6 (n=60) after'
>>> change.note("judge", language="zh-CN", timezone="Asia/Shanghai")
'模型 m1 → m2，于 1970-01-01 08:50 CST；judge 均值：变更前 0.85（n=400），变更后 0.6（n=60）'
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo

from inferwatch.model import Matcher, MatchOp
from inferwatch.model import metrics as catalog
from inferwatch.store import Series, Store

__all__ = ["VERSION_LABELS", "VersionChange", "version_change"]

VERSION_LABELS = ("model", "version", "prompt_version")
"""What a version is, of a generation's score series."""
_SCOPE = ("service", "route", "name")
_Key = tuple[str, ...]
_ZH_LABELS = {"model": "模型", "version": "版本", "prompt_version": "提示版本"}


@dataclass(frozen=True, slots=True)
class VersionChange:
    """The last version change: from ``before`` to ``after`` (model, version, prompt version) at ``at``."""

    before: _Key
    after: _Key
    at: float
    mean_before: float
    n_before: int
    mean_after: float
    n_after: int

    def note(self, name: str, language: str = "en", timezone: str = "UTC") -> str:
        """``model a → b at 2026-12-07 14:05 UTC; judge mean 0.85 (n=412) before, 0.61 (n=57) after``:
        in ``language`` (``en``, ``zh-CN``), the time in ``timezone`` (``alerting``'s)."""
        zh = language == "zh-CN"
        changed = [f"{_ZH_LABELS[k] if zh else k} {b or '-'} → {a or '-'}"
                   for k, b, a in zip(VERSION_LABELS, self.before, self.after, strict=True) if a != b]
        when = datetime.fromtimestamp(self.at, ZoneInfo(timezone)).strftime("%Y-%m-%d %H:%M %Z")
        before, after = f"{self.mean_before:.2g}", f"{self.mean_after:.2g}"
        if zh:
            return (f"{'，'.join(changed)}，于 {when}；{name} 均值：变更前 {before}（n={self.n_before}），"
                    f"变更后 {after}（n={self.n_after}）")
        return (f"{', '.join(changed)} at {when}; {name} mean {before} (n={self.n_before}) "
                f"before, {after} (n={self.n_after}) after")


def version_change(store: Store, labels: Mapping[str, str], now: float, lookback: float = 86400.0,
                   ) -> VersionChange | None:
    """The last version change of the scores ``labels`` name (service, route, name) in ``lookback``;
    None without one (a single version, no scores, or the stores' data unreadable)."""
    start = now - lookback
    counts, sums = (_groups(store.select(_matchers(suffix, labels), start, now))
                    for suffix in ("_count", "_sum"))
    born = {key: min(s.t[0] for s in series) for key, series in counts.items()}
    if len(born) < 2:
        return None
    new = max(born, key=lambda k: born[k])
    at = born[new]
    if at <= min(born.values()):
        return None
    old = max((k for k in counts if k != new), key=lambda k: _increase(counts[k], start, at))
    n_before, n_after = _increase(counts[old], start, at), _increase(counts[new], start, now)
    if n_before <= 0 or n_after <= 0:
        return None
    return VersionChange(old, new, at, _increase(sums.get(old, []), start, at) / n_before, round(n_before),
                         _increase(sums.get(new, []), start, now) / n_after, round(n_after))


def _matchers(suffix: str, labels: Mapping[str, str]) -> list[Matcher]:
    name = catalog.GENERATION_SCORE.name + suffix
    return [Matcher("__name__", MatchOp.EQ, name),
            *(Matcher(k, MatchOp.EQ, labels.get(k, "")) for k in _SCOPE)]


def _groups(found: Sequence[Series]) -> dict[_Key, list[Series]]:
    out: dict[_Key, list[Series]] = {}
    for s in found:
        keep = [i for i, v in enumerate(s.v) if math.isfinite(v)]  # staleness markers out
        if keep:
            out.setdefault(tuple(s.labels.get(k, "") for k in VERSION_LABELS), []).append(
                Series(s.labels, s.t[keep], s.v[keep]))
    return out


def _increase(series: Sequence[Series], start: float, end: float) -> float:
    """What the counters added in (start, end]: from zero where a series began inside the window."""
    total = 0.0
    for s in series:
        within = [i for i, t in enumerate(s.t) if t <= end]
        if not within:
            continue
        last = float(s.v[within[-1]])
        first = 0.0 if s.t[0] > start + 1.0 else float(s.v[0])  # begun in the window: counted from zero
        total += max(last - first, 0.0)
    return total
