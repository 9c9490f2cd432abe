"""Every check ``serve`` makes before it starts, without starting anything (``config check`` runs it)."""

from __future__ import annotations

from inferwatch.config import Config
from inferwatch.model import SimulatedClock
from inferwatch.rules import Rule, load_rules

__all__ = ["preflight"]


def preflight(config: Config) -> list[Rule]:
    """Compile the rules and build the alerting pipeline as ``serve`` would; raise ``ConfigError``.

    The listen address, intervals and thresholds are checked when the config
    loads; what needs the other packages (PromQL, templates, default-pack
    names, receivers and their credentials) is checked here.
    """
    from inferwatch.alerting import pipeline_from_config

    rules = load_rules(config)
    pipeline = pipeline_from_config(config, None, SimulatedClock(0.0))  # in memory: nothing written
    close = getattr(pipeline, "close", None)
    if callable(close):
        close()
    return rules
