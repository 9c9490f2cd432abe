"""Relabelling with Prometheus 2.42's semantics (``relabel_configs``, ``metric_relabel_configs``).

Every action of Prometheus 2.42 (``replace``, ``keep``, ``drop``, ``keepequal``,
``dropequal``, ``hashmod``, ``labelmap``, ``labeldrop``, ``labelkeep``,
``lowercase``, ``uppercase``), its defaults (separator ``;``, regex ``(.*)``
fully anchored, replacement ``$1``), Go's ``$1`` / ``${1}`` / ``$name``
expansion, and the load-time checks Prometheus makes, each error naming the rule.

>>> rules = parse_relabel_configs([{"source_labels": ["a"], "regex": "f(.*)",
...     "target_label": "d", "replacement": "ch${1}-ch${1}"}], where="job[x]")
>>> relabel({"a": "foo"}, rules)
{'a': 'foo', 'd': 'choo-choo'}
>>> relabel({"a": "foo"}, parse_relabel_configs([{"source_labels": ["a"], "action": "drop",
...     "regex": ".*o.*"}])) is None
True
"""

from __future__ import annotations

import enum
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from inferwatch._exceptions import ConfigError
from inferwatch.model._labels import is_valid_label_name

__all__ = ["RelabelAction", "RelabelConfigError", "RelabelRule", "parse_relabel_configs", "relabel"]

DEFAULT_SEPARATOR = ";"
DEFAULT_REGEX = "(.*)"
DEFAULT_REPLACEMENT = "$1"
# Prometheus's check on target labels and labelmap replacements that may hold references.
_TARGET_RE = re.compile(r"^(?:(?:[a-zA-Z_]|\$(?:\{\w+\}|\w+))+\w*)+$", re.ASCII)
_KEYS = frozenset({"source_labels", "separator", "regex", "modulus", "target_label", "replacement", "action"})


class RelabelConfigError(ConfigError):
    """A relabelling rule Prometheus would refuse at load; the message names the rule."""


class RelabelAction(enum.StrEnum):
    """The relabel actions of Prometheus 2.42 (keepequal and dropequal are new in 2.41)."""

    REPLACE = "replace"
    KEEP = "keep"
    DROP = "drop"
    KEEPEQUAL = "keepequal"
    DROPEQUAL = "dropequal"
    HASHMOD = "hashmod"
    LABELMAP = "labelmap"
    LABELDROP = "labeldrop"
    LABELKEEP = "labelkeep"
    LOWERCASE = "lowercase"
    UPPERCASE = "uppercase"


_A = RelabelAction
_NEEDS_TARGET = {_A.REPLACE, _A.HASHMOD, _A.LOWERCASE, _A.UPPERCASE, _A.KEEPEQUAL, _A.DROPEQUAL}
_TEMPLATED_TARGET = {_A.REPLACE, _A.LOWERCASE, _A.UPPERCASE, _A.KEEPEQUAL, _A.DROPEQUAL}
_NO_REPLACEMENT = {_A.LOWERCASE, _A.UPPERCASE, _A.KEEPEQUAL, _A.DROPEQUAL}


@dataclass(frozen=True)
class RelabelRule:
    """One relabelling rule, validated; build it with :func:`parse_relabel_configs`."""

    source_labels: tuple[str, ...] = ()
    separator: str = DEFAULT_SEPARATOR
    regex: str = DEFAULT_REGEX
    modulus: int = 0
    target_label: str = ""
    replacement: str = DEFAULT_REPLACEMENT
    action: RelabelAction = RelabelAction.REPLACE
    _compiled: Any = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self._compiled is None:
            object.__setattr__(self, "_compiled", _compile(self.regex, "relabel rule"))

    def as_dict(self) -> dict[str, Any]:
        """The rule as Prometheus prints it in its config (empty fields left out)."""
        out: dict[str, Any] = {}
        if self.source_labels:
            out["source_labels"] = list(self.source_labels)
        out["separator"] = self.separator
        if self.regex:
            out["regex"] = self.regex
        if self.modulus:
            out["modulus"] = self.modulus
        if self.target_label:
            out["target_label"] = self.target_label
        out["replacement"] = self.replacement
        out["action"] = self.action.value
        return out


def _compile(pattern: str, where: str) -> Any:
    import re2  # lazily: ``import inferwatch.sdk`` (via model) needs no RE2

    opts = re2.Options()
    opts.log_errors = False
    # As Go's regexp.Compile("^(?:" + s + ")$"): ``.`` does not match a newline.
    try:
        return re2.compile(f"^(?:{pattern})$", opts)
    except re2.error as exc:
        arg = exc.args[0] if exc.args else ""
        reason = arg.decode(errors="replace") if isinstance(arg, bytes) else str(arg)
        raise RelabelConfigError(
            f"{where}: invalid regex {pattern!r}: {reason or 'refused by RE2'}"
        ) from None


def _text(raw: Mapping[str, Any], key: str, default: str, where: str) -> str:
    value = raw.get(key, default)
    if value is None:
        return "" if key == "regex" else default
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise RelabelConfigError(f"{where}: {key} must be a string, got {value!r}")
    return str(value)


def _source_labels(raw: Mapping[str, Any], where: str) -> tuple[str, ...]:
    value = raw.get("source_labels") or []
    if isinstance(value, str) or not isinstance(value, list):
        raise RelabelConfigError(f"{where}: source_labels must be a list of label names, got {value!r}")
    for name in value:
        if not isinstance(name, str) or not is_valid_label_name(name):
            raise RelabelConfigError(f"{where}: source_labels: {name!r} is not a valid label name")
    return tuple(value)


def _modulus(raw: Mapping[str, Any], where: str) -> int:
    value = raw.get("modulus", 0) or 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise RelabelConfigError(f"{where}: modulus must be a non-negative integer, got {value!r}")
    return value


def _action(raw: Mapping[str, Any], where: str) -> RelabelAction:
    value = raw.get("action", "replace")
    if value is None or value == "":
        raise RelabelConfigError(f"{where}: relabel action cannot be empty")
    try:
        return RelabelAction(str(value).lower())
    except ValueError:
        raise RelabelConfigError(f"{where}: unknown relabel action {value!r}") from None


def parse_relabel_rule(raw: Any, where: str = "relabel_configs[0]") -> RelabelRule:
    """One rule from its YAML mapping, refused as Prometheus 2.42 refuses it at load."""
    if not isinstance(raw, Mapping):
        raise RelabelConfigError(f"{where}: a relabel rule must be a mapping, got {raw!r}")
    unknown = sorted(str(k) for k in raw if k not in _KEYS)
    if unknown:
        raise RelabelConfigError(f"{where}: unknown field {unknown[0]!r} (known: {', '.join(sorted(_KEYS))})")
    action = _action(raw, where)
    regex = _text(raw, "regex", DEFAULT_REGEX, where)
    rule = RelabelRule(
        source_labels=_source_labels(raw, where),
        separator=_text(raw, "separator", DEFAULT_SEPARATOR, where),
        regex=regex,
        modulus=_modulus(raw, where),
        target_label=_text(raw, "target_label", "", where),
        replacement=_text(raw, "replacement", DEFAULT_REPLACEMENT, where),
        action=action,
        _compiled=_compile(regex, where),
    )
    _check(rule, raw, f"{where} ({action.value})")
    return rule


def _check(rule: RelabelRule, raw: Mapping[str, Any], where: str) -> None:
    action = rule.action
    if action is _A.HASHMOD and rule.modulus == 0:
        raise RelabelConfigError(f"{where}: relabel configuration for hashmod requires non-zero modulus")
    if action in _NEEDS_TARGET and not rule.target_label:
        raise RelabelConfigError(
            f"{where}: relabel configuration for {action.value} action requires 'target_label' value"
        )
    if action in _TEMPLATED_TARGET and not _TARGET_RE.match(rule.target_label):
        raise RelabelConfigError(
            f"{where}: {rule.target_label!r} is invalid 'target_label' for {action.value} action"
        )
    if action in _NO_REPLACEMENT and rule.replacement != DEFAULT_REPLACEMENT:
        raise RelabelConfigError(f"{where}: 'replacement' can not be set for {action.value} action")
    if action is _A.LABELMAP and not _TARGET_RE.match(rule.replacement):
        raise RelabelConfigError(
            f"{where}: {rule.replacement!r} is invalid 'replacement' for labelmap action"
        )
    if action is _A.HASHMOD and not is_valid_label_name(rule.target_label):
        raise RelabelConfigError(
            f"{where}: {rule.target_label!r} is invalid 'target_label' for hashmod action"
        )
    if action in (_A.KEEPEQUAL, _A.DROPEQUAL) and (
        # Prometheus compares the regex by identity: any regex written out is refused.
        "regex" in raw
        or rule.modulus
        or rule.separator != DEFAULT_SEPARATOR
        or rule.replacement != DEFAULT_REPLACEMENT
    ):
        raise RelabelConfigError(
            f"{where}: {action.value} action requires only 'source_labels' and `target_label`, "
            "and no other fields"
        )
    if action in (_A.LABELDROP, _A.LABELKEEP) and (
        "source_labels" in raw
        or rule.target_label
        or rule.modulus
        or rule.separator != DEFAULT_SEPARATOR
        or rule.replacement != DEFAULT_REPLACEMENT
    ):
        raise RelabelConfigError(f"{where}: {action.value} action requires only 'regex', and no other fields")


def parse_relabel_configs(raw: Any, where: str = "relabel_configs") -> tuple[RelabelRule, ...]:
    """A list of rules from YAML; each error names ``where[i]`` and the action."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise RelabelConfigError(f"{where}: must be a list of relabel rules, got {raw!r}")
    return tuple(parse_relabel_rule(item, f"{where}[{i}]") for i, item in enumerate(raw))


def _is_name_char(ch: str) -> bool:
    # Go's regexp.extract: unicode.IsLetter || unicode.IsDigit || '_'
    return ch == "_" or ch.isalpha() or unicodedata.category(ch) == "Nd"


def _group(match: Any, regex: Any, name: str) -> str:
    if name.isascii() and name.isdigit() and len(name) <= 8:  # Go gives up on numbers >= 1e8
        num = int(name)
        if num > regex.groups:
            return ""
    elif name in regex.groupindex:
        num = regex.groupindex[name]
    else:
        return ""
    start, end = match.span(num)
    return "" if start < 0 else match.string[start:end]


def expand(template: str, match: Any, regex: Any) -> str:
    """``template`` with ``$1``, ``${1}``, ``$name``, ``${name}`` and ``$$`` expanded as Go's regexp does."""
    out: list[str] = []
    i, n = 0, len(template)
    while i < n:
        j = template.find("$", i)
        if j < 0:
            break
        out.append(template[i:j])
        i = j + 1
        if i < n and template[i] == "$":
            out.append("$")
            i += 1
            continue
        name, rest = _extract(template, i)
        if name is None:
            out.append("$")  # malformed: the ``$`` is kept as text
            continue
        out.append(_group(match, regex, name))
        i = rest
    out.append(template[i:])
    return "".join(out)


def _extract(template: str, i: int) -> tuple[str | None, int]:
    brace = i < len(template) and template[i] == "{"
    k = i + 1 if brace else i
    start = k
    while k < len(template) and _is_name_char(template[k]):
        k += 1
    if k == start:
        return None, i
    if brace:
        if k >= len(template) or template[k] != "}":
            return None, i
        return template[start:k], k + 1
    return template[start:k], k


def _hashmod(value: str, modulus: int) -> str:
    # Prometheus folds the MD5 sum into 64 bits with shifts past 63 that drop the first 8 bytes.
    import hashlib  # here: at module level it loads OpenSSL's libcrypto into the edge agent

    digest = hashlib.md5(value.encode(), usedforsecurity=False).digest()
    return str(int.from_bytes(digest[8:], "big") % modulus)


def _apply(labels: dict[str, str], rule: RelabelRule) -> dict[str, str] | None:
    value = rule.separator.join(labels.get(name, "") for name in rule.source_labels)
    regex, action = rule._compiled, rule.action
    out = dict(labels)
    if action is _A.DROP:
        return None if regex.match(value) else out
    if action is _A.KEEP:
        return out if regex.match(value) else None
    if action is _A.DROPEQUAL:
        return None if labels.get(rule.target_label, "") == value else out
    if action is _A.KEEPEQUAL:
        return out if labels.get(rule.target_label, "") == value else None
    if action is _A.REPLACE:
        _replace(out, rule, value)
    elif action in (_A.LOWERCASE, _A.UPPERCASE, _A.HASHMOD):
        if action is _A.HASHMOD:
            new = _hashmod(value, rule.modulus)
        else:
            new = value.lower() if action is _A.LOWERCASE else value.upper()
        _set(out, rule.target_label, new)
    else:
        _by_name(labels, out, rule)
    return out


def _set(out: dict[str, str], name: str, value: str) -> None:
    if value:  # an empty value removes the label, as Prometheus's label builder does
        out[name] = value
    else:
        out.pop(name, None)


def _replace(out: dict[str, str], rule: RelabelRule, value: str) -> None:
    match = rule._compiled.match(value)
    if match is None:
        return
    target = expand(rule.target_label, match, rule._compiled)
    if not is_valid_label_name(target):
        out.pop(rule.target_label, None)  # Prometheus deletes the unexpanded name here
        return
    new = expand(rule.replacement, match, rule._compiled)
    if not new:
        out.pop(rule.target_label, None)
        return
    out[target] = new


def _by_name(labels: dict[str, str], out: dict[str, str], rule: RelabelRule) -> None:
    regex = rule._compiled
    for name in sorted(labels):
        match = regex.match(name)
        if rule.action is _A.LABELMAP:
            if match is not None:
                _set(out, expand(rule.replacement, match, regex), labels[name])
        elif (match is not None) == (rule.action is _A.LABELDROP):
            out.pop(name, None)


def relabel(labels: Mapping[str, str], rules: Sequence[RelabelRule]) -> dict[str, str] | None:
    """``labels`` after ``rules`` in order; ``None`` when a rule drops them."""
    current: dict[str, str] | None = dict(labels)
    for rule in rules:
        assert current is not None
        current = _apply(current, rule)
        if current is None:
            return None
    return current
