"""The values and functions of ``config._gotemplate``: Go's printing, Alertmanager's data and functions."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

__all__ = ["FUNCS", "KV", "GoTemplateError", "GoTime", "field", "go_str", "template_data", "truth"]

NO_VALUE = "<no value>"


class GoTemplateError(ValueError):
    """A template outside the subset, or malformed."""


class KV(dict[str, str]):
    """Alertmanager's ``template.KV`` (labels, annotations): a missing key is empty (its templates run
    with ``missingkey=zero``); it has the methods ``SortedPairs``, ``Names`` and ``Values``."""


class _Struct(dict[str, Any]):
    """A Go struct (``Data``, ``Alert``, ``Pair``): printed as Go prints one, ``{v1 v2 ...}``."""


class _Pair(_Struct):
    """``template.Pair``."""


@dataclass(frozen=True)
class GoTime:
    """A Unix time printed as Go's ``time.Time`` (``2026-12-07 04:22:00.215 +0000 UTC``); ``None`` is
    Go's zero time."""

    t: float | None

    def __str__(self) -> str:
        from datetime import UTC, datetime

        if self.t is None:
            return "0001-01-01 00:00:00 +0000 UTC"
        d = datetime.fromtimestamp(self.t, UTC)
        frac = f"{d.microsecond:06d}".rstrip("0")
        return d.strftime("%Y-%m-%d %H:%M:%S") + (f".{frac}" if frac else "") + " +0000 UTC"


def go_str(v: Any) -> str:
    """How Go's fmt prints a value (%v)."""
    if v is None:
        return NO_VALUE
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v) if v != int(v) or abs(v) >= 1e21 else str(int(v))
    if isinstance(v, GoTime):
        return str(v)
    if isinstance(v, _Struct):
        return "{" + " ".join(go_str(x) for x in v.values()) + "}"
    if isinstance(v, list | tuple):
        return "[" + " ".join(go_str(x) for x in v) + "]"
    if isinstance(v, dict):
        return "map[" + " ".join(f"{k}:{go_str(x)}" for k, x in sorted(v.items())) + "]"
    return str(v)


def truth(v: Any) -> bool:
    return bool(v) if v is not None else False


def _printf(fmt: str, *args: Any) -> str:
    out, it = [], iter(args)
    for m in re.finditer(r"%%|%([-+ #0]*\d*(?:\.\d+)?)([a-zA-Z])|[^%]+", fmt):
        if m.group(0) == "%%":
            out.append("%")
        elif m.group(2) is None:
            out.append(m.group(0))
        else:
            flags, verb = m.group(1), m.group(2)
            arg = next(it, None)
            if verb in "vs":
                out.append(("%" + flags + "s") % go_str(arg))
            elif verb == "q":
                out.append('"' + go_str(arg).replace("\\", "\\\\").replace('"', '\\"') + '"')
            elif verb in "dfegxXo":
                out.append(("%" + flags + verb) % (arg if not isinstance(arg, str) else float(arg)))
            else:
                raise GoTemplateError(f"printf verb %{verb} is outside inferwatch's Go template subset")
    return "".join(out)


def _sprint(args: tuple[Any, ...]) -> str:
    """Go's ``fmt.Sprint``: a space between two operands when neither is a string."""
    out = ""
    for i, a in enumerate(args):
        if i and not isinstance(a, str) and not isinstance(args[i - 1], str):
            out += " "
        out += go_str(a)
    return out


def _go_regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)  # RE2's syntax, as far as Alertmanager's templates use it, is Python's


def _re_replace_all(pattern: str, repl: str, text: str) -> str:
    expand = re.sub(r"\$\{(\w+)\}|\$(\d+)", lambda m: "\\g<" + (m.group(1) or m.group(2)) + ">", repl)
    return _go_regex(pattern).sub(expand, go_str(text))


def _cmp(op: str) -> Any:
    import operator

    fn = getattr(operator, op)
    return lambda a, *b: any(fn(a, x) for x in b) if op == "eq" else fn(a, b[0])


FUNCS: dict[str, Any] = {
    "and": lambda *a: next((x for x in a if not truth(x)), a[-1]),
    "or": lambda *a: next((x for x in a if truth(x)), a[-1]),
    "not": lambda a: not truth(a),
    "eq": _cmp("eq"), "ne": _cmp("ne"), "lt": _cmp("lt"), "le": _cmp("le"),
    "gt": _cmp("gt"), "ge": _cmp("ge"),
    "len": lambda a: len(a) if a is not None else 0,
    "index": lambda a, *k: a.get(k[0]) if isinstance(a, dict) else a[int(k[0])],
    "print": lambda *a: _sprint(a),
    "println": lambda *a: " ".join(go_str(x) for x in a) + "\n",
    "printf": _printf,
    "toUpper": lambda s: go_str(s).upper(), "toLower": lambda s: go_str(s).lower(),
    "title": lambda s: re.sub(r"\b\w", lambda m: m.group(0).upper(), go_str(s)),
    "join": lambda sep, items: sep.join(go_str(x) for x in items or ()),
    "safeHtml": lambda s: go_str(s), "stringSlice": lambda *a: list(a),
    "reReplaceAll": _re_replace_all,
    "match": lambda pattern, s: _go_regex(pattern).search(go_str(s)) is not None,
}


def field(value: Any, name: str) -> Any:
    if isinstance(value, KV):
        if name in value:
            return value[name]
        method = _METHODS.get(name)
        return method(value) if method is not None else ""
    if isinstance(value, dict) and name in value:
        return value[name]
    if isinstance(value, list) and name in ("Names", "Values") and all(isinstance(p, _Pair) for p in value):
        return [p["Name" if name == "Names" else "Value"] for p in value]  # template.Pairs' methods
    if isinstance(value, list) and name in ("Firing", "Resolved"):
        return [a for a in value if a.get("Status") == name.lower()]
    raise GoTemplateError(f"can't evaluate field {name} in {type(value).__name__}")


_METHODS: dict[str, Any] = {
    "SortedPairs": lambda kv: [_Pair(Name=k, Value=v) for k, v in sorted(kv.items())],
    "Names": lambda kv: sorted(kv),
    "Values": lambda kv: [v for _, v in sorted(kv.items())],
}


def template_data(body: dict[str, Any]) -> dict[str, Any]:
    """Alertmanager's template data from its webhook body (the JSON ``amtool template render`` reads)."""
    def when(text: str) -> GoTime:
        from datetime import datetime

        if not text or text.startswith("0001-01-01"):
            return GoTime(None)
        return GoTime(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp())

    alerts = [_Struct({"Status": a["status"], "Labels": KV(a["labels"]), "Annotations": KV(a["annotations"]),
               "StartsAt": when(a["startsAt"]), "EndsAt": when(a["endsAt"]),
               "GeneratorURL": a.get("generatorURL", ""), "Fingerprint": a.get("fingerprint", "")})
              for a in body["alerts"]]
    return _Struct({"Receiver": body["receiver"], "Status": body["status"], "Alerts": alerts,
                    "GroupLabels": KV(body["groupLabels"]), "CommonLabels": KV(body["commonLabels"]),
                    "CommonAnnotations": KV(body["commonAnnotations"]),
                    "ExternalURL": body.get("externalURL", "")})
