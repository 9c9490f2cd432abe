"""The runtime rule: a config ``RuleSpec`` compiled to its PromQL expression."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from inferwatch._exceptions import ConfigError
from inferwatch.model import Dimension, Tier
from inferwatch.rules._outlier_promql import outlier_condition
from inferwatch.rules._pack import default_rule_specs, edge_rule_specs
from inferwatch.rules._promql import Binary, Expr, Number, PromQLError, parse_promql
from inferwatch.rules._signals import signal_promql
from inferwatch.rules._template import TemplateError, check_template, with_threshold
from inferwatch.settings import BaseConfig, DynamicThreshold, OutlierSpec, RuleOverride, RuleSpec

__all__ = ["Rule", "default_rule_pack", "load_rules"]


@dataclass(frozen=True)
class Rule:
    """An alerting rule ready to evaluate (and to export as a Prometheus rule).

    ``signal`` is the value expression; ``threshold is None`` means dynamic,
    decided per series by the injected band provider.
    """

    name: str
    dimension: Dimension
    tier: Tier
    signal: Expr
    comparison: str
    threshold: float | None
    for_: float = 0.0
    keep_firing_for: float = 0.0
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    dynamic: DynamicThreshold | None = None
    resolve_threshold: float | None = None
    condition: Expr | None = None  # a whole alert expression, no threshold (SLO burn-rate rules)
    outlier: OutlierSpec | None = None  # a peer comparison: ``signal`` gives one series per member
    key: str = ""  # what tells rules of one name apart (a Sloth SLO's page alert by window), else ""
    text: str = ""  # the condition as its author wrote it (rule files carry it as is), else ""

    @classmethod
    def from_spec(cls, spec: RuleSpec) -> Rule:
        """Compile a config rule; raise ``ConfigError`` naming the rule on a bad expression."""
        if spec.outlier is not None:
            return _outlier_rule(cls, spec, spec.outlier)
        assert spec.signal is not None and spec.threshold is not None  # RuleSpec checks it
        dynamic = spec.threshold == "dynamic"
        threshold = None if dynamic else float(spec.threshold)
        labels = {k: with_threshold(v, threshold) for k, v in spec.labels.items()}
        annotations = {k: with_threshold(v, threshold) for k, v in spec.annotations.items()}
        try:
            signal = parse_promql(signal_promql(spec.signal))
            for text in (*labels.values(), *annotations.values()):
                check_template(text)
        except (PromQLError, TemplateError) as exc:
            raise ConfigError(f"rule {spec.name}: {exc}") from None
        return cls(
            name=spec.name, dimension=spec.dimension, tier=spec.tier, signal=signal,
            comparison=spec.comparison, threshold=threshold,
            for_=spec.for_, keep_firing_for=spec.keep_firing_for,
            labels=MappingProxyType(labels), annotations=MappingProxyType(annotations),
            dynamic=(spec.dynamic or DynamicThreshold()) if dynamic else None,
            resolve_threshold=spec.resolve_threshold,
        )

    @property
    def uid(self) -> str:
        """The rule's identity among all rules: its name, or its ``key`` where names repeat.

        Prometheus lets rules share an alert name (Sloth names a SLO's page and ticket alerts
        alike); state, bands and peers are kept per ``uid``.
        """
        return self.key or self.name

    @property
    def static_threshold(self) -> float | None:
        """The fixed threshold, or a dynamic rule's fallback (``None`` if it has none)."""
        if self.threshold is not None:
            return self.threshold
        return self.dynamic.fallback if self.dynamic is not None else None

    @property
    def expr(self) -> Expr | None:
        """The alert expression (signal, comparison, threshold); ``None``: dynamic, no fallback."""
        if self.condition is not None:
            return self.condition
        t = self.static_threshold
        return None if t is None else Binary(self.comparison, self.signal, Number(t))

    @property
    def hold_expr(self) -> Expr | None:
        """What keeps an active alert active (the resolve threshold's side), or ``None`` without one."""
        if self.resolve_threshold is None or self.threshold is None:
            return None
        return Binary(self.comparison, self.signal, Number(self.resolve_threshold))

    @property
    def promql(self) -> str:
        """The alert expression as PromQL text (a dynamic rule's fallback form, or ``""``)."""
        e = self.expr
        return "" if e is None else str(e)

    @property
    def alert_labels(self) -> dict[str, str]:
        """The rule's own labels plus ``tier``, ``severity`` (unless its own) and ``dimension``."""
        # a severity of the rule's own stays (a Sloth spec's page_alert labels name theirs)
        return {"severity": self.tier.severity, **self.labels, "tier": self.tier.value,
                "dimension": self.dimension.value}


def _outlier_rule(cls: type[Rule], spec: RuleSpec, outlier: OutlierSpec) -> Rule:
    try:
        signal = parse_promql(outlier.expr)
        text = outlier_condition(outlier)
        condition = parse_promql(text) if text is not None else None
        for t in (*spec.labels.values(), *spec.annotations.values()):
            check_template(t, outlier=True)
    except (PromQLError, TemplateError) as exc:
        raise ConfigError(f"rule {spec.name}: outlier: {exc}") from None
    return cls(
        name=spec.name, dimension=spec.dimension, tier=spec.tier, signal=signal, comparison=">",
        threshold=None, for_=spec.for_, keep_firing_for=spec.keep_firing_for,
        labels=MappingProxyType(dict(spec.labels)), annotations=MappingProxyType(dict(spec.annotations)),
        condition=condition, outlier=outlier,
    )


def load_rules(config: BaseConfig) -> list[Rule]:
    """The rules of a config: the default pack (unless disabled) merged with the user's rules."""
    from inferwatch.rules._engine_packs import engine_rule_specs  # engine packs (rules.packs)

    specs: dict[str, RuleSpec] = {}
    pack, edge, engines = default_rule_specs(), edge_rule_specs(), engine_rule_specs(config.rules.packs)
    known = [s.name for s in (*pack, *edge, *engines)]
    unknown = sorted(set(config.rules.disable) - set(known))
    if unknown:
        raise ConfigError(f"rules.disable: no default-pack rule named {', '.join(map(repr, unknown))} "
                          f"(the pack has {', '.join(known)})")
    if config.rules.default_pack:
        pack = (*pack, *(edge if config.edge.devices else ()))
        specs = {s.name: s for s in pack if s.name not in config.rules.disable}
    specs.update({s.name: s for s in engines if s.name not in config.rules.disable})
    for s in config.rules.rules:
        specs[s.name] = s
    return [Rule.from_spec(s) for s in apply_overrides(specs, config.rules.overrides, known).values()]


def apply_overrides(specs: dict[str, RuleSpec], overrides: Mapping[str, RuleOverride],
                    known: Iterable[str] = ()) -> dict[str, RuleSpec]:
    """``specs`` with ``rules.overrides`` applied by rule name (labels and annotations merged).

    A pack rule that is not loaded (disabled, or an edge rule without devices) is
    named in ``known``: its override is kept for when it is, not an error.
    """
    unknown = sorted(set(overrides) - set(specs) - set(known))
    if unknown:
        close = difflib.get_close_matches(unknown[0], [*specs, *known], n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise ConfigError(f"rules.overrides: no rule named {', '.join(map(repr, unknown))} ({hint}"
                          f"the rules are {', '.join(sorted(specs))})")
    out = dict(specs)
    for name, o in overrides.items():
        spec = specs.get(name)
        if spec is None:
            continue
        changes = o.model_dump(exclude_unset=True, by_alias=False)
        changes["labels"] = {**spec.labels, **o.labels}
        changes["annotations"] = {**spec.annotations, **o.annotations}
        try:
            out[name] = RuleSpec.model_validate({**spec.model_dump(by_alias=False), **changes})
        except ValueError as exc:
            raise ConfigError(f"rules.overrides.{name}: {exc}") from None
    return out


def default_rule_pack() -> list[Rule]:
    """The default pack, compiled."""
    return [Rule.from_spec(s) for s in default_rule_specs()]
