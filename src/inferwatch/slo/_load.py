"""A config's SLOs and the whole rule set that ``serve``, ``replay``, ``rules`` and ``export`` run."""

from __future__ import annotations

from dataclasses import dataclass

from inferwatch.rules import (
    RecordingRule,
    Rule,
    apply_overrides,
    default_rule_specs,
    load_rules,
    read_rule_files,
)
from inferwatch.settings import BaseConfig, RuleSpec
from inferwatch.slo._generate import SloRules, slo_rules
from inferwatch.slo._model import Slo
from inferwatch.slo._shorthand import shorthand_slo
from inferwatch.slo._sloth import load_sloth_file

__all__ = ["REPLACED_BY_SLO", "RuleSet", "load_rule_set", "load_slos"]

# The default pack's rules an SLO's alerts stand for (rules.slo_replaces_static).
REPLACED_BY_SLO: dict[str, tuple[str, ...]] = {
    "availability": ("HighErrorRate", "ServiceUnavailable"),
    "latency": ("HighP99Latency", "SevereLatency"),
}


def load_slos(config: BaseConfig) -> list[Slo]:
    """The shorthands of ``slos:``, then every ``slo_files`` spec's SLOs, in order."""
    probed: dict[str, list[str]] = {}
    for p in config.probes:  # a golden set judges answers, not reachability: its runs are not counted
        if "service" in p.labels and p.golden is None:
            probed.setdefault(p.labels["service"], []).append(p.name)
    out = [shorthand_slo(s, i, probed) for i, s in enumerate(config.slos)]
    for ref in config.slo_files:
        out += load_sloth_file(ref)
    return out


@dataclass(frozen=True)
class RuleSet:
    """The alert rules (default pack, user rules, SLO alerts), the recordings, and the SLOs."""

    alerts: list[Rule]
    recordings: tuple[RecordingRule, ...]
    slos: tuple[Slo, ...]
    slo: SloRules


def _without_services(rule: Rule, spec: RuleSpec, services: list[str]) -> Rule:
    sig = spec.signal
    assert sig is not None, f"{spec.name}: the rules an SLO replaces have a signal"
    extra = f'service!~"{"|".join(sorted(services))}"'
    matchers = ",".join(m for m in (getattr(sig, "matchers", ""), extra) if m)
    new = spec.model_copy(update={"signal": sig.model_copy(update={"matchers": matchers})})
    return Rule.from_spec(new)


def _replace_static(config: BaseConfig, rules: list[Rule], slos: list[Slo]) -> list[Rule]:
    specs = {s.name: s for s in default_rule_specs()}
    own = {s.name for s in config.rules.rules}
    out = []
    for r in rules:
        kinds = [k for k, names in REPLACED_BY_SLO.items() if r.name in names]
        services = sorted({s.service for s in slos if kinds and s.kind == kinds[0]})
        if services and r.name not in own and r.name in specs:
            overrides = {k: v for k, v in config.rules.overrides.items() if k == r.name}
            spec = apply_overrides({r.name: specs[r.name]}, overrides)[r.name]
            r = _without_services(r, spec, services)  # the SLO pages for these services
        out.append(r)
    return out


def load_rule_set(config: BaseConfig) -> RuleSet:
    """Every rule ``serve`` evaluates: ``load_rules`` plus the SLOs' recordings and alerts.

    With ``rules.slo_replaces_static``, the default pack's error-rate and
    latency rules leave out the services whose availability or latency SLO
    alerts instead.
    """
    rules = load_rules(config)
    slos = load_slos(config)
    generated = slo_rules(slos)
    if config.rules.slo_replaces_static and slos:
        rules = _replace_static(config, rules, slos)
    taken = {r.name for r in rules} & {a.name for a in generated.alerts}
    if taken:
        from inferwatch._exceptions import ConfigError

        raise ConfigError(f"SLO alert {sorted(taken)[0]!r} has the name of a rule; rename one")
    files, recordings = read_rule_files(config.rule_files)  # Prometheus rule files, as they are
    taken = {r.name for r in rules} & {a.name for a in files}
    if taken:
        from inferwatch._exceptions import ConfigError

        raise ConfigError(f"rule_files: alert {sorted(taken)[0]!r} has the name of a rule of the config; "
                          "rename one (or disable the pack rule)")
    return RuleSet([*rules, *generated.alerts, *files], (*recordings, *generated.recordings), tuple(slos),
                   generated)
