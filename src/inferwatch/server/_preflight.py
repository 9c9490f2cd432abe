"""Every check ``serve`` makes before it starts, without starting anything (``config check`` runs it)."""

from __future__ import annotations

from inferwatch.config import Config, alertmanager_file_notes, prometheus_config_notes
from inferwatch.model import SimulatedClock, format_duration
from inferwatch.promql import DEFAULT_LOOKBACK_MS
from inferwatch.rules import Rule, rule_file_notes
from inferwatch.slo import load_rule_set

__all__ = ["config_warnings", "preflight"]


def preflight(config: Config) -> list[Rule]:
    """Compile the rules and build the alerting pipeline as ``serve`` would; raise ``ConfigError``.

    The listen address, intervals and thresholds are checked when the config
    loads; what needs the other packages (PromQL, templates, default-pack
    names, receivers and their credentials) is checked here.
    """
    from inferwatch.alerting import pipeline_from_config

    rules = load_rule_set(config).alerts  # the SLO files are read and their queries parsed here
    pipeline = pipeline_from_config(config, None, SimulatedClock(0.0))  # in memory: nothing written
    close = getattr(pipeline, "close", None)
    if callable(close):
        close()
    return rules


def config_warnings(config: Config) -> list[str]:
    """What ``serve`` runs but not well: one line each, printed by ``serve`` and ``config check``.

    A target scraped no more often than the query lookback (5 m) leaves its
    series without a sample at some evaluations: an instant query finds a
    sample only if it is at most 5 m old, and a scrape that starts just before
    a round is not stored until after it. A rule over such a series then sees
    gaps (a ``for`` restarts, a dynamic band skips points), or nothing at all
    when the two schedules fall into step. Prometheus has the same limit.
    The sections of ``scrape.prometheus_config`` and ``alerting.alertmanager_file`` not read are listed too.
    """
    lookback = DEFAULT_LOOKBACK_MS / 1000
    notes = [
        f"scrape target {t.job}/{t.instance or '(discovered)'}: "
        f"interval {format_duration(t.effective_interval)} is not "
        f"shorter than the {format_duration(lookback)} query lookback, so rules and instant queries will "
        f"find no sample at some evaluations; scrape at most every {format_duration(lookback / 2)}"
        for t in (*config.scrape.targets, *config.scrape.jobs) if t.effective_interval >= lookback
    ]
    if config.scrape.prometheus_config is not None:  # what of the prometheus.yml is not read, by line
        notes += prometheus_config_notes(config.scrape.prometheus_config)
    if config.alerting.alertmanager_file is not None:  # and of the alertmanager.yml
        notes += alertmanager_file_notes(config.alerting.alertmanager_file)
    notes += rule_file_notes(config.rule_files, config.server.evaluation_interval)
    return notes
