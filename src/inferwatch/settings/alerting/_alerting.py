"""``alerting``: the route tree, inhibitions, receivers, actions and retry policy.

Shaped like Alertmanager's configuration; with no ``alerting`` section the
defaults of DESIGN.md apply: P0 pages by phone and scales out, P1 goes to the
WeCom group (``SevereLatency`` also degrades the service), P2 waits for the
09:00 digest, alerts are grouped by ``[alertname, service]``.

    alerting:
      receivers:
        - {name: wecom, type: wecom, key: "ROBOT-KEY"}   # replaces the default 'wecom'
      route:
        routes:
          - {matchers: ['service="ranker"'], receiver: wecom, group_wait: 10s}
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from inferwatch.model import is_valid_label_name
from inferwatch.settings._types import Duration, FrozenModel
from inferwatch.settings.alerting._actions import (
    ActionSpec,
    DegradeActionSpec,
    KubernetesScaleSpec,
    RollbackActionSpec,
)
from inferwatch.settings.alerting._alertmanagers import AlertmanagerSpec
from inferwatch.settings.alerting._heartbeat import HeartbeatSenderSpec
from inferwatch.settings.alerting._oncall import SCHEDULE_PREFIX, EscalationSpec, HistoryConfig, OnCallConfig
from inferwatch.settings.alerting._time_intervals import TimeIntervalSpec
from inferwatch.settings.receivers import (
    DigestReceiverSpec,
    PagerDutyReceiverSpec,
    ReceiverBase,
    TerminalReceiverSpec,
    WeComReceiverSpec,
    check_matchers,
)

__all__ = ["BaseAlertingConfig", "InhibitRuleSpec", "NotifyPolicy", "RouteSpec"]


class RouteSpec(FrozenModel):
    """A node of the route tree; unset fields inherit from the parent (Alertmanager's rules)."""

    receiver: str | None = None
    matchers: tuple[str, ...] = ()
    group_by: tuple[str, ...] | None = Field(None, description="labels to group by; '...' is all")
    group_wait: Duration | None = None
    group_interval: Duration | None = Field(None, gt=0)
    repeat_interval: Duration | None = Field(None, gt=0)
    continue_: bool = Field(False, alias="continue")
    escalation: str | None = Field(None, description="an escalation policy's name (inherited)")
    mute_time_intervals: tuple[str, ...] = Field(
        (), description="send nothing while one of these time_intervals holds (not inherited)")
    active_time_intervals: tuple[str, ...] = Field(
        (), description="send only while one of these time_intervals holds (not inherited)")
    routes: tuple[RouteSpec, ...] = ()

    model_config = FrozenModel.model_config | {"populate_by_name": True}

    @field_validator("matchers")
    @classmethod
    def _matchers(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        return check_matchers(v)

    @field_validator("group_by")
    @classmethod
    def _group_by(cls, v: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if v is not None and "..." in v and len(v) > 1:
            raise ValueError("'...' groups by all labels and cannot be combined with names")
        for name in v or ():
            if name != "..." and not is_valid_label_name(name):
                raise ValueError(f"invalid label name {name!r} in group_by")
        return v

    def receivers(self) -> set[str]:
        """Every receiver named in this subtree."""
        out = {self.receiver} if self.receiver else set()
        for child in self.routes:
            out |= child.receivers()
        return out

    def escalations(self) -> set[str]:
        """Every escalation policy named in this subtree."""
        out = {self.escalation} if self.escalation else set()
        for child in self.routes:
            out |= child.escalations()
        return out

    def time_interval_names(self) -> set[str]:
        """Every time interval named in this subtree."""
        out = {*self.mute_time_intervals, *self.active_time_intervals}
        for child in self.routes:
            out |= child.time_interval_names()
        return out


class InhibitRuleSpec(FrozenModel):
    """Mute ``target`` alerts while a ``source`` alert fires with the same ``equal`` labels."""

    source_matchers: tuple[str, ...] = Field(min_length=1)
    target_matchers: tuple[str, ...] = Field(min_length=1)
    equal: tuple[str, ...] = ()
    hold: Duration = Field(
        0.0, ge=0, le=3600,
        description="keep muting this long after the source resolved (inferwatch's; Alertmanager has "
                    "none and the export leaves it out): a burn an outage caused outlasts the outage")

    @field_validator("source_matchers", "target_matchers")
    @classmethod
    def _matchers(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        return check_matchers(v)


class NotifyPolicy(FrozenModel):
    """Retries: exponential backoff from ``initial_backoff`` up to ``max_backoff``, with jitter."""

    initial_backoff: Duration = Field(1.0, gt=0)
    max_backoff: Duration = Field(60.0, gt=0)
    jitter: float = Field(0.2, ge=0, le=1, description="fraction of the backoff randomised")
    timeout: Duration = Field(10.0, gt=0, description="per HTTP request")
    attempt_timeout: Duration = Field(
        30.0, gt=0, description="per delivery attempt; a hung attempt is abandoned and retried")
    failing_after: int = Field(
        3, ge=1, description="failed attempts in a row before NotificationsFailing fires for a receiver")
    fallback_receiver: str = Field(
        "terminal", description="gets NotificationsFailing when the route would send it to the failing one")


# One drift incident moves many features of one model at once: its quality alerts are one
# group per service and model (one message), whatever their alertname and feature.
_QUALITY_GROUP = RouteSpec(matchers=('dimension="quality"',), group_by=("service", "model"))


def _default_route() -> RouteSpec:
    return RouteSpec(
        receiver="terminal",
        group_by=("alertname", "service"),
        group_wait=30.0,
        group_interval=300.0,
        repeat_interval=4 * 3600.0,
        routes=(
            RouteSpec(matchers=('tier="P0"',), receiver="phone"),
            RouteSpec(matchers=('tier="P1"',), receiver="wecom", routes=(_QUALITY_GROUP,)),
            RouteSpec(matchers=('tier="P2"',), receiver="digest", routes=(_QUALITY_GROUP,)),
        ),
    )


DEFAULT_INHIBIT_RULES: tuple[InhibitRuleSpec, ...] = (
    # The source document's rule: critical mutes the warning of the same alert.
    InhibitRuleSpec(
        source_matchers=('severity="critical"',), target_matchers=('severity="warning"',),
        equal=("alertname",),
    ),
    # An outage explains its latency: a P0 of a service mutes its P1/P2 service alerts.
    InhibitRuleSpec(
        source_matchers=('tier="P0"',), target_matchers=('tier=~"P1|P2"', 'dimension="service"'),
        equal=("service",),
    ),
    # An outage seen from outside (every probe failing) or a target down is one message: it mutes
    # the latency, quality and SLO alerts of the same service, whatever their tier. Only alerts
    # that name a service: an unlabelled TargetDown must not mute every unlabelled alert.
    InhibitRuleSpec(
        source_matchers=('alertname=~"TargetDown|ProbeFailing"',),
        target_matchers=('alertname!~"TargetDown|ProbeFailing"', 'service!=""'),
        equal=("service",),
    ),
    # Every probe of a service failing is the outage as users see it: the one message. Its down
    # targets (labelled with the service) say the same thing and are muted by it.
    InhibitRuleSpec(
        source_matchers=('alertname="ProbeFailing"',),
        target_matchers=('alertname="TargetDown"', 'service!=""'), equal=("service",),
    ),
    # The budget an outage spent keeps its SLO's burn-rate alerts firing for their short window
    # after it ended (5m fast, 30m slow): the outage's page told it, so they stay muted that long.
    InhibitRuleSpec(
        source_matchers=('alertname=~"TargetDown|ProbeFailing"',),
        target_matchers=('slo_alert!=""', 'service!=""'), equal=("service",), hold=1800.0,
    ),
    # A higher drift level of a feature says all the lower ones do: rollback mutes review and
    # warning, review mutes warning, of the same feature of the same model.
    InhibitRuleSpec(
        source_matchers=('alertname="FeatureDriftRollback"',),
        target_matchers=('alertname=~"FeatureDriftReview|FeatureDriftWarning"',),
        equal=("service", "model", "feature"),
    ),
    InhibitRuleSpec(
        source_matchers=('alertname="FeatureDriftReview"',),
        target_matchers=('alertname="FeatureDriftWarning"',), equal=("service", "model", "feature"),
    ),
    # A member that stepped away from its peers (the `change:` outlier rules) is paged by its step
    # rule; its peer-test twin, firing later for the same member, says the same thing.
    InhibitRuleSpec(
        source_matchers=('alertname="ReplicaSlowStep"',), target_matchers=('alertname="ReplicaSlow"',),
        equal=("service", "model", "version", "instance"),
    ),
    InhibitRuleSpec(
        source_matchers=('alertname="ReplicaConfidenceStep"',),
        target_matchers=('alertname="ReplicaConfidenceLow"',),
        equal=("service", "model", "version", "instance"),
    ),
    InhibitRuleSpec(
        source_matchers=('alertname="GPUUtilizationStep"',),
        target_matchers=('alertname="GPUUtilizationOutlier"',), equal=("model", "UUID"),
    ),
    # An SLO's faster burn-rate alert mutes its slower ones (inferwatch.slo's slo_alert label).
    InhibitRuleSpec(
        source_matchers=('slo_alert="fast_page"',), target_matchers=('slo_alert=~"slow_page|ticket"',),
        equal=("sloth_id",),
    ),
    InhibitRuleSpec(
        source_matchers=('slo_alert="slow_page"',), target_matchers=('slo_alert="ticket"',),
        equal=("sloth_id",),
    ),
)

DEFAULT_RECEIVERS: tuple[ReceiverBase, ...] = (
    TerminalReceiverSpec(name="terminal"),
    PagerDutyReceiverSpec(name="phone"),
    WeComReceiverSpec(name="wecom"),
    DigestReceiverSpec(name="digest"),
)

DEFAULT_ACTIONS: tuple[ActionSpec, ...] = (
    # nothing to scale without a service
    KubernetesScaleSpec(name="scale_out", matchers=('tier="P0"', 'service!=""')),
    DegradeActionSpec(name="degrade", matchers=('alertname="SevereLatency"',)),
    RollbackActionSpec(name="rollback", matchers=('alertname="FeatureDriftRollback"',)),
)


class BaseAlertingConfig(FrozenModel):
    """Notification pipeline settings (Alertmanager's shape, inferwatch's defaults) but the receivers' types.

    ``inferwatch.settings.AlertingConfig`` is this with ``receivers`` typed by the union of every
    receiver type (made by ``alerting.notify``'s registry, above this package); the parts below
    ``alerting`` read a config through this class.
    """

    route: RouteSpec = Field(default_factory=_default_route)
    inhibit_rules: tuple[InhibitRuleSpec, ...] = DEFAULT_INHIBIT_RULES
    time_intervals: tuple[TimeIntervalSpec, ...] = Field(
        (), description="named times routes mute in (mute_time_intervals) or send in (active_time_intervals)")
    alertmanager_file: str | None = Field(
        None, description="an alertmanager.yml read as it is: its route, receivers, inhibit_rules, "
                          "time_intervals and resolve_timeout replace these (docs/migrate.md)")
    receivers: tuple[ReceiverBase, ...] = Field((), description="added to (or replacing) the defaults")
    actions: tuple[ActionSpec, ...] = Field((), description="added to (or replacing) the defaults")
    default_actions: bool = Field(True, description="keep the default scale_out/degrade/rollback")
    notify: NotifyPolicy = Field(default_factory=NotifyPolicy)
    resolve_timeout: Duration = Field(300.0, gt=0, description="an alert not resent ends after this")
    alertmanagers: tuple[AlertmanagerSpec, ...] = Field((), description="also push alerts to these")
    external_labels: dict[str, str] = Field(
        default_factory=dict, description="added to pushed alerts (and Prometheus's external_labels)")
    escalations: tuple[EscalationSpec, ...] = ()
    oncall: OnCallConfig = Field(default_factory=OnCallConfig)
    history: HistoryConfig = Field(default_factory=HistoryConfig)
    resolved_after_silence: bool = Field(
        True, description="send a resolved message when a silence ends on an alert that resolved under it "
        "(to the receivers that heard it fire)")
    language: Literal["en", "zh-CN"] = Field(
        "en", description="language of the built-in message templates, the CLI's on-call verbs, the incident "
        "page and the dashboard's default (zh-CN: Chinese; where unset, those pages follow the "
        "reader's browser)")
    timezone: str = Field("UTC", description="IANA time zone of times in messages, the CLI, the dashboard "
                          "and the incident page, e.g. Asia/Shanghai")
    heartbeat: HeartbeatSenderSpec | None = Field(
        None, description="a Watchdog sent to an outside dead man's switch (docs/heartbeats.md)")

    @field_validator("timezone")
    @classmethod
    def _timezone(cls, v: str) -> str:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            ZoneInfo(v)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown time zone {v!r}") from None
        return v

    @field_validator("external_labels")
    @classmethod
    def _external_labels(cls, v: dict[str, str]) -> dict[str, str]:
        bad = [k for k in v if not is_valid_label_name(k) or k.startswith("__")]
        if bad:
            raise ValueError(f"invalid label names {bad}")
        return v

    @field_validator("route")
    @classmethod
    def _root(cls, v: RouteSpec) -> RouteSpec:
        if not v.receiver:
            raise ValueError("the root route needs a receiver")
        if v.matchers:
            raise ValueError("the root route matches every alert; it cannot have matchers")
        if v.mute_time_intervals or v.active_time_intervals:
            raise ValueError("the root route cannot have mute_time_intervals or active_time_intervals")
        return v

    @model_validator(mode="after")
    def _references(self) -> BaseAlertingConfig:
        names = [r.name for r in self.receivers]
        if len(names) != len(set(names)):
            raise ValueError(f"receiver names must be unique: {sorted(names)}")
        known = {r.name for r in self.effective_receivers()}
        missing = sorted(self.route.receivers() - known)
        if missing:
            raise ValueError(f"route names unknown receivers {missing} (known: {sorted(known)})")
        if self.notify.fallback_receiver not in known:
            raise ValueError(f"notify.fallback_receiver names unknown receiver "
                             f"{self.notify.fallback_receiver!r} (known: {sorted(known)})")
        for r in self.effective_receivers():
            if isinstance(r, DigestReceiverSpec) and (r.deliver_to not in known or r.deliver_to == r.name):
                raise ValueError(f"digest {r.name!r} delivers to unknown receiver {r.deliver_to!r}")
        for r in self.effective_receivers():  # voice and SMS may take their numbers from a schedule
            ref = getattr(r, "oncall", "")
            if ref and self.oncall.layer(ref) is None:
                raise ValueError(f"receiver {r.name!r}: oncall names no schedule (layer) {ref!r}")
        actions = [a.name for a in self.actions]
        if len(actions) != len(set(actions)):
            raise ValueError(f"action names must be unique: {sorted(actions)}")
        self._check_escalations(known)
        intervals = [t.name for t in self.time_intervals]
        if len(intervals) != len(set(intervals)):
            raise ValueError(f"time interval names must be unique: {sorted(intervals)}")
        unknown = sorted(self.route.time_interval_names() - set(intervals))
        if unknown:
            raise ValueError(f"route names unknown time intervals {unknown} (known: {sorted(intervals)})")
        return self

    def _check_escalations(self, known: set[str]) -> None:
        policies = [e.name for e in self.escalations]
        if len(policies) != len(set(policies)):
            raise ValueError(f"escalation names must be unique: {sorted(policies)}")
        unknown = sorted(self.route.escalations() - set(policies))
        if unknown:
            raise ValueError(f"route names unknown escalations {unknown} (known: {sorted(policies)})")
        for e in self.escalations:
            for i, step in enumerate(e.steps):
                for target in step.notify:
                    where = f"escalation {e.name!r} steps[{i}].notify"
                    if target.startswith(SCHEDULE_PREFIX):
                        found = self.oncall.layer(target)
                        if found is None:
                            raise ValueError(f"{where}: unknown schedule layer {target!r}")
                        contacts = {k for m in found[1].members for k in m.contacts}
                        if not contacts <= known:
                            raise ValueError(f"{where}: {target!r} has contacts for unknown receivers "
                                             f"{sorted(contacts - known)}")
                    elif target not in known:
                        raise ValueError(f"{where}: unknown receiver {target!r} (known: {sorted(known)})")

    def escalation(self, name: str) -> EscalationSpec | None:
        """The escalation policy called ``name``."""
        return next((e for e in self.escalations if e.name == name), None)

    def effective_receivers(self) -> tuple[ReceiverBase, ...]:
        """The defaults, each replaced by a configured receiver of the same name, then the rest."""
        own = {r.name: r for r in self.receivers}
        merged = [own.pop(d.name, d) for d in DEFAULT_RECEIVERS]
        return (*merged, *own.values())

    def effective_actions(self) -> tuple[ActionSpec, ...]:
        """The default actions (unless disabled), replaced by name, then the configured ones."""
        own = {a.name: a for a in self.actions}
        base = DEFAULT_ACTIONS if self.default_actions else ()
        merged = [own.pop(d.name, d) for d in base]
        return (*merged, *own.values())
