"""``alerting.alertmanager_file``: a team's ``alertmanager.yml`` read as it is.

Read: ``route`` (nested routes, ``match``/``match_re``/``matchers``, ``group_by``
incl. ``'...'``, the three timings, ``continue``, ``mute_time_intervals``,
``active_time_intervals``), ``receivers`` (see ``_alertmanager_receivers``),
``inhibit_rules`` (``source_match``/``_re``/``_matchers``, the target's, ``equal``),
``time_intervals`` (and the older top-level ``mute_time_intervals``), ``templates``
(files or globs, relative to the file: their ``{{ define }}`` blocks, for the message
fields inferwatch renders), and ``global.resolve_timeout`` with the receivers'
``global`` defaults. The root route's
unset ``group_by`` is Alertmanager's (one group), not inferwatch's. What it gives
replaces inferwatch's own route, receivers, inhibit rules and time intervals.

A key inferwatch cannot honour is refused with its file, line and name; a section
it does not need (``global.smtp_hello``...) is listed by :func:`alertmanager_file_notes`,
with its line, at start and by ``config check``.
"""

from __future__ import annotations

import glob as globbing
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from inferwatch._exceptions import ConfigError
from inferwatch.model import parse_duration, parse_matchers
from inferwatch.settings._gotemplate import GoTemplate, GoTemplateError
from inferwatch.settings._yaml_lines import At, load_located
from inferwatch.settings.alerting._alerting import InhibitRuleSpec, RouteSpec
from inferwatch.settings.alerting._alertmanager_receivers import ReceiverCheck, translate_receiver
from inferwatch.settings.alerting._time_intervals import TimeIntervalSpec

__all__ = ["alertmanager_file_notes", "read_alertmanager_file"]

_TOP = {"global", "route", "receivers", "inhibit_rules", "time_intervals", "mute_time_intervals", "templates"}
_GLOBAL_READ = {"resolve_timeout", "smtp_from", "smtp_smarthost", "smtp_auth_username", "smtp_auth_password",
                "smtp_require_tls", "slack_api_url", "pagerduty_url", "wechat_api_url", "wechat_api_secret",
                "wechat_api_corp_id", "telegram_api_url"}
_ROUTE_KEYS = {"receiver", "group_by", "group_wait", "group_interval", "repeat_interval", "continue", "match",
               "match_re", "matchers", "mute_time_intervals", "active_time_intervals", "routes"}
_INHIBIT_KEYS = {f"{side}_{kind}" for side in ("source", "target")
                 for kind in ("match", "match_re", "matchers")}


def _quote(value: Any) -> str:
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _matchers(raw: dict[str, Any], at: At, prefix: str = "") -> tuple[str, ...]:
    """``match``, ``match_re`` and ``matchers`` as one list of matcher strings."""
    out: list[str] = []
    for op, key in (("=", f"{prefix}match"), ("=~", f"{prefix}match_re")):
        for name, value in at.key(key).mapping(raw.get(key)).items():
            out.append(f"{name}{op}{_quote(value)}")
    key = f"{prefix}matchers"
    for i, text in enumerate(at.key(key).sequence(raw.get(key))):
        try:
            out += [str(m) for m in parse_matchers(str(text))]
        except ValueError as exc:
            raise at.key(key).item(i).error(str(exc)) from None
    return tuple(out)


def _route(raw: Any, at: At, known: tuple[set[str], set[str]], root: bool) -> RouteSpec:
    raw = at.mapping(raw)
    for key in raw:
        if key not in _ROUTE_KEYS:
            raise at.error(f"is not a route key (read: {', '.join(sorted(_ROUTE_KEYS))})", key)
    receivers, intervals = known
    if raw.get("receiver") is not None and raw["receiver"] not in receivers:
        raise at.error(f"unknown receiver {raw['receiver']!r} (known: {sorted(receivers)})", "receiver")
    for key in ("mute_time_intervals", "active_time_intervals"):
        for name in at.key(key).sequence(raw.get(key)):
            if name not in intervals:
                raise at.error(f"unknown time interval {name!r} (known: {sorted(intervals)})", key)
    own = {k: raw[k] for k in ("receiver", "group_by", "group_wait", "group_interval", "repeat_interval",
                                "continue", "mute_time_intervals", "active_time_intervals") if k in raw}
    own["matchers"] = _matchers(raw, at)
    if root and "group_by" not in own:
        own["group_by"] = ()  # Alertmanager's root without group_by: every alert in one group
    try:
        RouteSpec.model_validate(own)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise at.error(err["msg"].removeprefix("Value error, "), str(err["loc"][0]) if err["loc"] else None
                       ) from None
    children = at.key("routes")
    own["routes"] = tuple(_route(r, children.item(i), known, False)
                          for i, r in enumerate(children.sequence(raw.get("routes"))))
    return RouteSpec.model_validate(own)


def _inhibit(raw: Any, at: At) -> InhibitRuleSpec:
    raw = at.mapping(raw)
    for key in raw:
        if key not in _INHIBIT_KEYS | {"equal"}:
            raise at.error("is not an inhibit_rules key", key)
    spec = {"source_matchers": _matchers(raw, at, "source_"),
            "target_matchers": _matchers(raw, at, "target_"),
            "equal": tuple(at.key("equal").sequence(raw.get("equal")))}
    try:
        return InhibitRuleSpec.model_validate(spec)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise at.error(f"{err['loc'][0]}: {err['msg'].removeprefix('Value error, ')}") from None


def _interval(raw: Any, at: At) -> TimeIntervalSpec:
    try:
        return TimeIntervalSpec.model_validate(at.mapping(raw))
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err["loc"]).lstrip(".")
        raise at.error(f"{loc}: {err['msg'].removeprefix('Value error, ')}") from None


def _templates(raw: Any, at: At, base: Path) -> tuple[str, ...]:
    """The texts of the ``templates:`` files, in Alertmanager's order (each glob's matches sorted)."""
    texts = []
    for i, pattern in enumerate(at.sequence(raw)):
        if not isinstance(pattern, str) or not pattern:
            raise at.item(i).error("must be a file name or glob")
        for name in sorted(globbing.glob(str(base / pattern))):  # an absolute pattern stays absolute
            try:
                text = Path(name).read_text("utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise at.item(i).error(f"{name}: cannot read: {exc}") from None
            try:
                GoTemplate("", [text])
            except GoTemplateError as exc:
                if "is not defined" not in str(exc):  # one file may call another's: checked with all
                    raise at.item(i).error(f"{name}: Go template: {exc}") from None
            texts.append(text)
    return tuple(texts)


def read_alertmanager_file(path: str | Path, check: ReceiverCheck | None = None) -> dict[str, Any]:
    """The ``alerting`` fields an alertmanager.yml gives; raises ``ConfigError`` naming file, line, key
    (``check`` validates each receiver, so that its error names its line)."""
    data, at = load_located(Path(path), "the alertmanager.yml")
    data = at.mapping(data) if data is not None else {}
    for key in data:
        if key not in _TOP:
            raise at.error(f"is not a key of alertmanager.yml (read: {', '.join(sorted(_TOP))})", key)
    glob = at.key("global").mapping(data.get("global"))
    intervals = [_interval(r, at.key(k).item(i)) for k in ("time_intervals", "mute_time_intervals")
                 for i, r in enumerate(at.key(k).sequence(data.get(k)))]
    library = _templates(data.get("templates"), at.key("templates"), Path(path).parent)
    receivers = [translate_receiver(r, at.key("receivers").item(i), glob, library, check)
                 for i, r in enumerate(at.key("receivers").sequence(data.get("receivers")))]
    if "route" not in data:
        raise at.error("an alertmanager.yml needs a route", "route")
    known = ({r["name"] for r in receivers}, {t.name for t in intervals})
    if not at.key("route").mapping(data["route"]).get("receiver"):
        raise at.key("route").error("the root route needs a receiver")
    rules = at.key("inhibit_rules")
    out: dict[str, Any] = {
        "route": _route(data["route"], at.key("route"), known, True),
        "receivers": tuple(receivers),
        "inhibit_rules": tuple(_inhibit(r, rules.item(i))
                               for i, r in enumerate(rules.sequence(data.get("inhibit_rules")))),
        "time_intervals": tuple(intervals),
    }
    if "resolve_timeout" in glob:
        try:
            out["resolve_timeout"] = parse_duration(str(glob["resolve_timeout"]))
        except ValueError as exc:
            raise at.key("global").error(str(exc), "resolve_timeout") from None
    return out


def alertmanager_file_notes(path: str | Path) -> list[str]:
    """What of ``path`` inferwatch does not read: one line each, with its line number."""
    try:
        data, at = load_located(Path(path), "the alertmanager.yml")
    except ConfigError:  # read_alertmanager_file has refused it already
        return []
    if not isinstance(data, dict):
        return []
    glob = data.get("global")
    glob = glob if isinstance(glob, dict) else {}
    notes = [(at.key("global").key_line(k), f"global.{k} is not read by inferwatch (ignored)")
              for k in glob if k not in _GLOBAL_READ]
    return [f"{path}:{line}: {text}" for line, text in sorted(notes)]
