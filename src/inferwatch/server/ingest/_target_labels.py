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

from inferwatch.config import ScrapeJob, ScrapeTarget
from inferwatch.formats import ParsedScrape
from inferwatch.model import Labels, RelabelRule, format_duration, relabel

__all__ = ["TargetLabels", "job_target_labels", "relabel_scrape", "target_labels"]


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


def _with_port(address: str, scheme: str) -> str:
    """Prometheus adds the scheme's port to an address without one (``host`` -> ``host:80``)."""
    if address.startswith("["):
        return address if "]:" in address else f"{address}:{443 if scheme == 'https' else 80}"
    if address.count(":") != 0:  # host:port, or a bare IPv6 address Prometheus leaves alone
        return address
    return f"{address}:{443 if scheme == 'https' else 80}"


def job_target_labels(job: ScrapeJob, found: dict[str, str]) -> TargetLabels:
    """A discovered target of ``job`` (``found``: its group's labels and ``__address__``), as Prometheus
    2.42's ``PopulateLabels`` makes it: the job's defaults where ``found`` has none, ``params`` as
    ``__param_*``, ``relabel_configs``, the default port, ``instance``; ``__*`` labels left out."""
    lset = {**job.labels, **found}
    for name, value in (("job", job.job), ("__scrape_interval__", format_duration(job.effective_interval)),
                        ("__scrape_timeout__", format_duration(job.effective_timeout)),
                        ("__metrics_path__", job.metrics_path), ("__scheme__", job.scheme)):
        if not lset.get(name):
            lset[name] = value
    for key, values in job.params.items():
        if values:
            lset[f"__param_{key}"] = values[0]
    discovered = dict(lset)
    rules = job.relabel_rules()
    after = relabel(lset, rules) if rules else lset
    if after is None or not after.get("__address__"):
        return TargetLabels(discovered, None, "")
    scheme = after.get("__scheme__") or "http"
    after["__address__"] = _with_port(after["__address__"], scheme)
    after["instance"] = after.get("instance") or after["__address__"]
    params = {k: list(v) for k, v in job.params.items()}
    params.update({k[len("__param_"):]: [v] for k, v in after.items() if k.startswith("__param_")})
    query = urllib.parse.urlencode(sorted(params.items()), doseq=True)
    path = after.get("__metrics_path__") or "/"
    url = urllib.parse.urlunsplit((scheme, after["__address__"], path, query, ""))
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
