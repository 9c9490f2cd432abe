"""The rule evaluator: one round evaluates every rule at ``now`` and sends alerts to the sink.

Like a Prometheus rule group: each rule's expression is evaluated natively
(:class:`QueryEngine`), its instances step through pending/firing/resolved
(:func:`step_alerts`), instances that need sending (firing, or resolved since
the last send; re-sent every ``resend_delay``) go to the sink, and the state
is persisted when a state store is given.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from inferwatch._exceptions import StoreError
from inferwatch.model import Clock, Labels
from inferwatch.promql import Expr, plan_shared
from inferwatch.rules._alert import Alert, AlertSink, AlertState
from inferwatch.rules._engine import RULE_TIMEOUT_S, EvalError, LabelMemo, QueryEngine
from inferwatch.rules._lifecycle import AlertInstance, step_alerts
from inferwatch.rules._outlier import PeerGroup, peer_groups
from inferwatch.rules._outlier_change import ChangeTracker
from inferwatch.rules._recording import Appender, Recorder, RecordingRule
from inferwatch.rules._rule import Rule
from inferwatch.rules._state import AlertStateStore
from inferwatch.rules._template import expand_template
from inferwatch.settings import DynamicThreshold, OutlierSpec
from inferwatch.store import Store

__all__ = ["ActiveAlert", "BandProvider", "BandProviderFactory", "Evaluator"]

log = logging.getLogger(__name__)

_CMP: dict[str, Callable[[float, float], bool]] = {
    ">": lambda a, b: a > b, ">=": lambda a, b: a >= b, "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b,
}


class BandProvider(Protocol):
    """Dynamic thresholds for one rule: a band per series key, learning each point it sees."""

    def band(self, key: str, t: float, value: float) -> tuple[float, float] | None:
        """The ``(low, high)`` band for ``key`` at ``t`` before learning ``value`` (``None``: no band yet)."""
        ...

    def held(self, key: str) -> bool:
        """Whether ``key``'s current excursion is held (it repeats earlier ones): it stays pending."""
        ...

    def learned(self) -> Mapping[str, bool]:
        """Each series key seen and whether its band is learned yet (the API shows it)."""
        ...

    def export_state(self) -> Any:
        """JSON-serialisable state, persisted with the alert state."""
        ...

    def restore_state(self, state: Any) -> None:
        """Restore what :meth:`export_state` returned."""
        ...


BandProviderFactory = Callable[[str, DynamicThreshold], BandProvider]


@dataclass(frozen=True)
class ActiveAlert:
    """A pending or firing alert, as the HTTP API shows it."""

    alertname: str
    labels: Labels
    state: AlertState
    active_since: float
    value: float
    annotations: Mapping[str, str]
    held: bool = False  # pending past its `for`: a recurring excursion (dynamic rules)
    rule: str = ""  # the rule's uid (its name, unless rules share the name)


class Evaluator:
    """Evaluates rules on a store at the times it is told (``evaluate(now)``).

    >>> from inferwatch.model import SimulatedClock
    >>> from inferwatch.rules import default_rule_pack
    >>> from inferwatch.store import MemoryStore
    >>> ev = Evaluator(default_rule_pack(), MemoryStore(), clock=SimulatedClock(0))
    >>> ev.evaluate(60.0)
    []
    """

    def __init__(
        self, rules: Sequence[Rule], store: Store, *, clock: Clock, sink: AlertSink | None = None,
        state: AlertStateStore | None = None, band_factory: BandProviderFactory | None = None,
        resend_delay: float = 60.0, band_save_every: float = 300.0,
        recordings: Sequence[RecordingRule] = (), record_to: Appender | None = None,
    ) -> None:
        """``band_save_every``: seconds between saves of the baselines' state (alert state is
        saved every round; baselines are large and losing minutes of their learning is harmless).
        ``recordings`` run first each round, so the alert rules read what they wrote (SLO rules);
        their samples go to ``record_to`` (default: ``store``)."""
        self.rules = list(rules)
        self.recordings = list(recordings)
        self.band_save_every = band_save_every
        self._bands_saved_at = -math.inf
        self.store = store
        self.clock = clock
        self.sink = sink
        self.state = state
        self.resend_delay = resend_delay
        self._alerts: dict[str, dict[str, AlertInstance]] = {r.uid: {} for r in self.rules}
        self._bands: dict[str, BandProvider] = {}
        self._peers: dict[str, tuple[float, list[PeerGroup]]] = {}
        self._changes = {r.uid: ChangeTracker(r.outlier) for r in self.rules
                         if r.outlier is not None and r.outlier.change is not None}
        self._memo = LabelMemo()
        self._shared = plan_shared(_round_exprs(self.rules))
        self._recorder = Recorder(self.recordings, store, self._memo, record_to)
        self._lock = threading.Lock()  # the API thread reads while the loop evaluates
        self._save_failing = False
        # Called (off the lock) with the label sets that became pending in a round: the alert history.
        self.on_pending: Callable[[list[Labels], float], None] | None = None
        self._new_pending: list[Labels] = []
        if band_factory is not None:
            for r in self.rules:
                if r.dynamic is not None:
                    self._bands[r.uid] = band_factory(r.name, r.dynamic)
        if state is not None:
            self._restore(state)

    def _restore(self, state: AlertStateStore) -> None:
        alerts, bands = state.load()
        for name, instances in alerts.items():
            if name in self._alerts:
                self._alerts[name] = instances
        for name, band_state in bands.items():
            if name in self._bands:
                self._bands[name].restore_state(band_state)
            elif name in self._changes:  # an outlier rule's member histories (kept beside the bands)
                self._changes[name].restore_state(band_state)

    def evaluate(self, now: float | None = None) -> list[Alert]:
        """One round at ``now`` (default: the clock); return the firing and retained resolved alerts."""
        ts = self.clock.now() if now is None else float(now)
        with self._lock:
            to_send = self._round(ts)
            pending, self._new_pending = self._new_pending, []
        if pending and self.on_pending is not None:
            try:
                self.on_pending(pending, ts)
            except Exception:  # the history must not stop rule evaluation
                log.exception("recording %d pending alerts failed", len(pending))
        if self.sink is not None:
            try:
                self.sink.send(to_send, ts)
            except Exception:  # the pipeline's failure must not stop rule evaluation
                log.exception("alert sink failed at %s; %d alerts are re-sent after resend_delay",
                              ts, len(to_send))
        with self._lock:
            return [a.to_alert() for inst in self._alerts.values() for a in inst.values()
                    if a.state is not AlertState.PENDING]

    rule_timeout: float = RULE_TIMEOUT_S
    """Real seconds one rule may take; past it the rule is cut (logged), the round goes on."""

    def _round(self, ts: float) -> list[Alert]:
        if self.recordings:
            self._recorder.record(ts)
        engine = QueryEngine(self.store, memo=self._memo, timeout=self.rule_timeout,
                             shared=self._shared.results())  # dropped with the round
        to_send: list[Alert] = []
        for rule in self.rules:
            try:
                results, held = self._results(rule, engine, ts)
            except (EvalError, StoreError) as exc:
                log.warning("rule %s: evaluation at %s failed: %s", rule.name, ts, exc)
                continue
            old = self._alerts[rule.uid]
            new = step_alerts(old, results, ts, rule.for_, rule.keep_firing_for, held)
            self._new_pending += [a.labels for fp, a in new.items() if a.state is AlertState.PENDING
                                  and (fp not in old or old[fp].state is not AlertState.PENDING)]
            for fp, a in new.items():
                if a.needs_sending(ts, self.resend_delay):
                    a = replace(a, last_sent_at=ts)
                    new[fp] = a
                    to_send.append(a.to_alert())
            self._alerts[rule.uid] = new
        self._persist(ts)
        return to_send

    def shift_clock(self, step: float) -> None:
        """The wall clock stepped by ``step`` seconds: move pending timers with it.

        A pending alert's ``for`` then counts time that really passed, so a
        forward step neither fires it early nor a backward one delays it.
        """
        with self._lock:
            for name, instances in self._alerts.items():
                self._alerts[name] = {fp: _shifted(a, step) for fp, a in instances.items()}

    def save_state(self) -> None:
        """Save alert and baseline state now (before a reload or shutdown)."""
        with self._lock:
            self._persist(self.clock.now(), force=True)

    def _persist(self, ts: float, force: bool = False) -> None:
        if self.state is None:
            return
        bands: dict[str, Any] = {}
        if force or ts - self._bands_saved_at >= self.band_save_every:
            bands = {name: b.export_state() for name, b in self._bands.items()}
            bands |= {name: c.export_state() for name, c in self._changes.items()}
        try:
            self.state.save(self._alerts, bands)  # rules missing from `bands` keep their stored state
        except StoreError as exc:
            if not self._save_failing:  # once per episode (a full disk fails every round)
                log.error("saving alert state failed; it is kept in memory until saving works again: %s", exc)
            self._save_failing = True
            return
        if self._save_failing:
            log.warning("saving alert state works again")
            self._save_failing = False
        if bands or not (self._bands or self._changes):
            self._bands_saved_at = ts

    def _results(
        self, rule: Rule, engine: QueryEngine, ts: float
    ) -> tuple[list[tuple[Labels, Mapping[str, str], float]], set[str]]:
        """The alerting vector, and the fingerprints of its alerts held by their band provider."""
        if rule.outlier is not None:
            return self._outliers(rule, rule.outlier, engine, ts), set()
        band = self._bands.get(rule.uid)
        held_series: set[Labels] = set()
        if rule.threshold is None and band is not None:
            vec = _vector(engine.instant(rule.signal, ts), rule)
            vec = [(lab, v) for lab, v in vec if self._outside(rule, band, lab, ts, v)]
            held_series = {lab for lab, _ in vec if band.held(_band_key(rule, lab))}
        elif rule.expr is None:
            return [], set()
        elif rule.hold_expr is not None:
            vec = self._hysteresis(rule, engine, ts)
        else:
            vec = _vector(engine.instant(rule.expr, ts), rule)
        out: list[tuple[Labels, Mapping[str, str], float]] = []
        held: set[str] = set()
        seen: set[Labels] = set()
        for labels, value in vec:
            alert_labels = _alert_labels(rule, labels, value)
            if alert_labels in seen:
                raise EvalError("vector contains metrics with the same labelset after applying alert labels")
            seen.add(alert_labels)
            notes = {k: expand_template(t, labels, value) for k, t in rule.annotations.items()}
            out.append((alert_labels, notes, value))
            if labels in held_series:
                held.add(alert_labels.fingerprint())
        return out, held

    def _outliers(self, rule: Rule, spec: OutlierSpec, engine: QueryEngine,
                  ts: float) -> list[tuple[Labels, Mapping[str, str], float]]:
        groups = peer_groups(spec, _vector(engine.instant(rule.signal, ts), rule))
        if rule.uid in self._changes:
            groups = self._changes[rule.uid].judge(ts, groups)
        self._peers[rule.uid] = (ts, groups)
        out: list[tuple[Labels, Mapping[str, str], float]] = []
        for g in groups:
            for m in g.members:
                if not m.outlier:
                    continue
                extra: dict[str, float | str] = {"median": g.median, "spread": g.spread,
                                                 "peers": g.others(m, spec.member)}
                notes = {k: expand_template(t, m.labels, m.value, extra) for k, t in rule.annotations.items()}
                out.append((_alert_labels(rule, m.labels, m.value), notes, m.value))
        if len({lab for lab, _, _ in out}) < len(out):
            raise EvalError("vector contains metrics with the same labelset after applying alert labels")
        return out

    def peer_status(self, rule_name: str) -> tuple[float, list[PeerGroup]] | None:
        """An outlier rule's peer groups at its last evaluation (time, groups); ``None``: none yet."""
        with self._lock:
            return self._peers.get(rule_name)

    def _hysteresis(self, rule: Rule, engine: QueryEngine, ts: float) -> list[tuple[Labels, float]]:
        # Past the threshold, or past the resolve threshold while its alert is active (pending or firing).
        assert rule.expr is not None and rule.hold_expr is not None
        fire = {lab for lab, _ in _vector(engine.instant(rule.expr, ts), rule)}
        known = self._alerts.get(rule.uid, {})
        active = {fp for fp, a in known.items() if a.state in (AlertState.PENDING, AlertState.FIRING)}
        return [(lab, v) for lab, v in _vector(engine.instant(rule.hold_expr, ts), rule)
                if lab in fire or _alert_labels(rule, lab, v).fingerprint() in active]

    def _outside(self, rule: Rule, band: BandProvider, labels: Labels, ts: float, value: float) -> bool:
        assert rule.dynamic is not None
        bounds = band.band(_band_key(rule, labels), ts, value)
        if bounds is None:
            fb = rule.dynamic.fallback
            return fb is not None and _CMP[rule.comparison](value, fb)
        low, high = bounds
        d = rule.dynamic.direction
        return (d in ("above", "both") and value > high) or (d in ("below", "both") and value < low)

    def band_status(self, rule_name: str) -> dict[str, bool] | None:
        """A dynamic rule's series (their labels, ``{job="x"}``) and whether each band is learned.

        ``None`` for a rule without bands (static, or no band factory).
        """
        band = self._bands.get(rule_name)
        if band is None:
            return None
        with self._lock:
            learned = dict(band.learned())
        return {k.removeprefix(rule_name): v for k, v in learned.items()}

    def band_warmup(self, rule_name: str) -> dict[str, dict[str, float]]:
        """A dynamic rule's series and their warm-up progress, where its bands report one."""
        band = self._bands.get(rule_name)
        warmup = getattr(band, "warmup", None)  # optional: not part of BandProvider
        if warmup is None:
            return {}
        with self._lock:
            progress = dict(warmup())
        return {k.removeprefix(rule_name): v for k, v in progress.items()}

    def instances(self) -> dict[str, dict[str, AlertInstance]]:
        """Every rule's alert instances by fingerprint (a copy)."""
        with self._lock:
            return {name: dict(inst) for name, inst in self._alerts.items()}

    def active(self) -> list[ActiveAlert]:
        """Pending and firing alerts, for the API, sorted by name and labels."""
        with self._lock:
            snapshot = {name: list(inst.values()) for name, inst in self._alerts.items()}
        out = [
            ActiveAlert(a.labels.get("alertname", name), a.labels, a.state, a.active_at, a.value,
                        dict(a.annotations), a.held, name)
            for name, inst in snapshot.items() for a in inst
            if a.state in (AlertState.PENDING, AlertState.FIRING)
        ]
        return sorted(out, key=lambda x: (x.alertname, x.labels))


def _round_exprs(rules: Sequence[Rule]) -> list[Expr]:
    """What a round evaluates, for its common subexpressions: each rule's signal, twice for a rule
    that evaluates it in two expressions (past its threshold, past its resolve threshold)."""
    out: list[Expr] = []
    for r in rules:
        out += [r.signal, r.signal] if r.hold_expr is not None else [r.signal]
    return out


def _shifted(a: AlertInstance, step: float) -> AlertInstance:
    if a.state is AlertState.PENDING:
        a = replace(a, active_at=a.active_at + step)
    if a.keep_firing_since:
        a = replace(a, keep_firing_since=a.keep_firing_since + step)
    return a


def _vector(result: object, rule: Rule) -> list[tuple[Labels, float]]:
    if not isinstance(result, list):
        raise EvalError(f"rule {rule.name}: the expression gives a scalar, not a vector")
    return result


def _band_key(rule: Rule, labels: Labels) -> str:
    return f"{rule.name}{labels.without_name()}"


def _alert_labels(rule: Rule, labels: Labels, value: float) -> Labels:
    merged = dict(labels.without_name().items_tuple)
    for k, t in rule.alert_labels.items():
        merged[k] = expand_template(t, labels, value)
    merged["alertname"] = rule.name
    return Labels(merged)
