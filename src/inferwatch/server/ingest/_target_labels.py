"""A target's labels as Prometheus 2.42 builds them: discovered, relabelled, and its series relabelled.

Discovered labels are ``__address__``, ``__scheme__``, ``__metrics_path__``,
``__scrape_interval__``, ``__scrape_timeout__``, ``job``, ``__param_<name>``
for the URL's query, and the target's own labels; ``relabel_configs`` then run
on them (a target they drop is kept aside, not scraped); ``instance`` defaults
to ``__address__``; labels starting with ``__`` are left out of the target's
labels. ``metric_relabel_configs`` run on each scraped series before storage.
"""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass

from inferwatch.config import ScrapeTarget
from inferwatch.formats import ParsedScrape
from inferwatch.model import Labels, RelabelRule, format_duration, relabel

__all__ = ["TargetLabels", "relabel_scrape", "target_labels"]


@dataclass(frozen=True)
class TargetLabels:
    """A target's discovered labels, and (``None`` when dropped) its labels and scrape URL."""

    discovered: dict[str, str]
    labels: dict[str, str] | None
    url: str


def _discovered(cfg: ScrapeTarget) -> dict[str, str]:
    parts = urllib.parse.urlsplit(cfg.url)
    out = {
        "__address__": parts.netloc.rpartition("@")[2],
        "__scheme__": parts.scheme,
        "__metrics_path__": parts.path or "/",
        "__scrape_interval__": format_duration(cfg.effective_interval),
        "__scrape_timeout__": format_duration(cfg.effective_timeout),
        "job": cfg.job,
    }
    for key, value in urllib.parse.parse_qsl(parts.query, keep_blank_values=True):
        out.setdefault(f"__param_{key}", value)  # Prometheus: the first value of each parameter
    out.update(cfg.labels)
    return out


def target_labels(cfg: ScrapeTarget, rules: tuple[RelabelRule, ...]) -> TargetLabels:
    """``cfg``'s labels after ``rules``; without rules, the labels it always had."""
    discovered = _discovered(cfg)
    if not rules:
        return TargetLabels(discovered, {**cfg.labels, "job": cfg.job, "instance": cfg.instance}, cfg.url)
    after = relabel(discovered, rules)
    if after is None or not after.get("__address__"):  # Prometheus drops a target left with no address
        return TargetLabels(discovered, None, cfg.url)
    after.setdefault("instance", after["__address__"])
    query = urllib.parse.urlsplit(cfg.url).query
    url = urllib.parse.urlunsplit(
        (
            after.get("__scheme__") or "http",
            after["__address__"],
            after.get("__metrics_path__") or "/",
            query,
            "",
        )
    )
    labels = {k: v for k, v in after.items() if not k.startswith("__")}
    return TargetLabels(discovered, labels, url)


def relabel_scrape(
    parsed: ParsedScrape, rules: tuple[RelabelRule, ...], cache: dict[Labels, Labels | None]
) -> None:
    """Apply ``metric_relabel_configs`` to ``parsed`` in place; a series they drop is not stored.

    ``cache`` keeps each series' result between scrapes (the rules are pure).
    """
    if not rules:
        return

    def one(ls: Labels) -> Labels | None:
        if ls not in cache:
            out = relabel(ls, rules)
            cache[ls] = Labels(out) if out and out.get("__name__") else None
        return cache[ls]

    kept = [
        (new, t, v)
        for ls, t, v in zip(parsed.labels, parsed.t, parsed.v, strict=True)
        if (new := one(ls)) is not None
    ]
    parsed.labels = [k[0] for k in kept]
    parsed.t = [k[1] for k in kept]
    parsed.v = [k[2] for k in kept]
    parsed.tracked = {str(new): new for ls in parsed.tracked.values() if (new := one(ls)) is not None}
    parsed.exemplars = [(new, ex, v, t) for ls, ex, v, t in parsed.exemplars if (new := one(ls)) is not None]
