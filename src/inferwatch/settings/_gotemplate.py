"""The subset of Go's text/template that Alertmanager's message fields are written in.

    {{ .CommonLabels.alertname }}  {{ .Alerts.Firing | len }}  {{ range .Alerts }}...{{ end }}
    {{ if eq .Status "firing" }}...{{ else }}...{{ end }}  {{ printf "%.1f" 2.25 }}
    {{ join ", " .GroupLabels.Values }}  {{ reReplaceAll "(.*):.*" "$1" .Labels.instance | toUpper }}

Supported: text with ``{{- ... -}}`` trimming and comments; pipelines (``|``) of fields
(``.A.B``, ``$.A``), string, number and boolean literals, parenthesised pipelines; ``if`` /
``else if`` / ``else``, ``range`` (with ``else``), ``with``; Go's ``and or not eq ne lt le gt
ge len index print printf println`` and Alertmanager's ``toUpper toLower title join safeHtml
reReplaceAll match stringSlice``; the methods ``.Firing``, ``.Resolved``, ``.SortedPairs``,
``.Names``, ``.Values``. Anything else (variables, ``define``/``template``, ``block``, other
functions) is refused when the template is parsed, naming the construct: never rendered as
something other than what Alertmanager would send.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

__all__ = ["KV", "GoTemplate", "GoTemplateError", "GoTime", "template_data"]

_ACTION = re.compile(r"\{\{(- )?(.*?)( -)?\}\}", re.S)
_TOKEN = re.compile(r'\s*("(?:\\.|[^"\\])*"|`[^`]*`|-?\d+(?:\.\d+)?|\(|\)|\||\$?(?:\.[A-Za-z0-9_]+)+|\.'
                    r"|\$[A-Za-z0-9_]*|:?=|,|[A-Za-z_][A-Za-z0-9_]*)")
_KEYWORDS = {"if", "else", "end", "range", "with"}
_REFUSED = {"define", "template", "block", "break", "continue"}
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


@dataclass(frozen=True)
class _Node:
    kind: str  # text, action, if, range, with
    value: Any = None  # text, or the pipeline
    body: tuple[_Node, ...] = ()
    other: tuple[_Node, ...] = ()  # the else branch


def _tokens(src: str) -> list[str]:
    out: list[str] = []
    pos, src = 0, src.strip()
    while pos < len(src):
        m = _TOKEN.match(src, pos)
        if not m or m.end() == pos:
            raise GoTemplateError(f"cannot read {src[pos:pos + 20]!r}")
        tok = m.group(1)
        if tok.startswith(".") and len(tok) > 1 and out and out[-1] == ")" and m.start(1) == pos:
            tok = "@" + tok  # (pipeline).Field: a field of the parenthesis' value
        out.append(tok)
        pos = m.end()
    return out


def _split(text: str) -> list[tuple[str, str]]:
    """(``text``, chunk) and (``action``, source) in order, with Go's trim markers applied."""
    parts: list[tuple[str, str]] = []
    pos = 0
    for m in _ACTION.finditer(text):
        chunk = text[pos:m.start()]
        parts.append(("text", chunk.rstrip() if m.group(1) else chunk))
        inner = m.group(2).strip()
        if not (inner.startswith("/*") and inner.endswith("*/")):
            parts.append(("action", inner))
        pos = m.end()
        if m.group(3):
            rest = text[pos:]
            pos += len(rest) - len(rest.lstrip())
    parts.append(("text", text[pos:]))
    return [p for p in parts if p != ("text", "")]


class _Parser:
    def __init__(self, parts: list[tuple[str, str]]) -> None:
        self.parts, self.i = parts, 0

    def block(self, until: tuple[str, ...]) -> tuple[tuple[_Node, ...], str]:
        nodes: list[_Node] = []
        while self.i < len(self.parts):
            kind, src = self.parts[self.i]
            self.i += 1
            if kind == "text":
                nodes.append(_Node("text", src))
                continue
            toks = _tokens(src)
            head = toks[0] if toks else ""
            if head in _REFUSED:
                raise GoTemplateError(f"'{{{{ {head} }}}}' is outside inferwatch's Go template subset")
            if head in until:
                return tuple(nodes), src
            if head in ("if", "range", "with"):
                nodes.append(self.control(head, toks[1:]))
            elif head in _KEYWORDS:
                raise GoTemplateError(f"unexpected '{{{{ {src} }}}}'")
            else:
                nodes.append(_Node("action", _pipeline(toks)))
        if until:
            raise GoTemplateError(f"missing '{{{{ end }}}}' (open: {until})")
        return tuple(nodes), ""

    def control(self, head: str, toks: list[str]) -> _Node:
        if any(t in (":=", "=") for t in toks):
            raise GoTemplateError("variables ($x := ...) are outside inferwatch's Go template subset")
        body, closer = self.block(("else", "end"))
        other: tuple[_Node, ...] = ()
        if closer.startswith("else"):
            rest = _tokens(closer)[1:]
            if rest and rest[0] == "if" and head == "if":
                other = (self.control("if", rest[1:]),)
                return _Node(head, _pipeline(toks), body, other)
            other, _ = self.block(("end",))
        return _Node(head, _pipeline(toks), body, other)


def _pipeline(toks: list[str]) -> list[list[Any]]:
    """Commands (lists of operands; a nested pipeline for a parenthesis) separated by ``|``."""
    if not toks:
        raise GoTemplateError("an empty action")
    if any(t in (":=", "=") for t in toks) or any(t.startswith("$") and t not in ("$",) and
                                                   not t.startswith("$.") for t in toks):
        raise GoTemplateError("variables ($x := ...) are outside inferwatch's Go template subset")
    commands: list[list[Any]] = [[]]
    stack: list[list[list[Any]]] = []
    for t in toks:
        if t == "(":
            stack.append(commands)
            commands = [[]]
        elif t == ")":
            if not stack:
                raise GoTemplateError("unbalanced ')'")
            inner, commands = commands, stack.pop()
            commands[-1].append(("pipe", inner))
        elif t == "|":
            commands.append([])
        elif t.startswith("@") and commands[-1] and isinstance(commands[-1][-1], tuple):
            commands[-1][-1] = ("pipe", commands[-1][-1][1], t[1:])
        else:
            commands[-1].append(t)
    if stack or any(not c for c in commands):
        raise GoTemplateError("unbalanced parentheses or an empty command")
    for c in commands:
        head = c[0]
        if isinstance(head, str) and re.fullmatch(r"[A-Za-z_]\w*", head) and head not in _FUNCS \
                and head not in ("true", "false", "nil"):
            raise GoTemplateError(f"function {head!r} is outside inferwatch's Go template subset")
    return commands


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


def _truth(v: Any) -> bool:
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


_FUNCS: dict[str, Any] = {
    "and": lambda *a: next((x for x in a if not _truth(x)), a[-1]),
    "or": lambda *a: next((x for x in a if _truth(x)), a[-1]),
    "not": lambda a: not _truth(a),
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


class GoTemplate:
    """A parsed template; ``render(data)`` with Alertmanager's data as nested dicts and lists.

    >>> GoTemplate('{{ .CommonLabels.alertname | toUpper }}: {{ len .Alerts }}').render(
    ...     {"CommonLabels": {"alertname": "Slow"}, "Alerts": [{}, {}]})
    'SLOW: 2'
    """

    def __init__(self, source: str) -> None:
        self.source = source
        self._nodes, _ = _Parser(_split(source)).block(())

    def render(self, data: Any) -> str:
        """The text, as Alertmanager's template would write it."""
        out: list[str] = []
        self._run(self._nodes, data, data, out)
        return "".join(out)

    def _run(self, nodes: tuple[_Node, ...], dot: Any, root: Any, out: list[str]) -> None:
        for n in nodes:
            if n.kind == "text":
                out.append(n.value)
            elif n.kind == "action":
                out.append(go_str(self._pipe(n.value, dot, root)))
            else:
                value = self._pipe(n.value, dot, root)
                if n.kind == "range" and _truth(value):
                    items = sorted(value.items()) if isinstance(value, dict) else value
                    for item in (v for _, v in items) if isinstance(value, dict) else items:
                        self._run(n.body, item, root, out)
                elif _truth(value):
                    self._run(n.body, value if n.kind == "with" else dot, root, out)
                else:
                    self._run(n.other, dot, root, out)

    def _pipe(self, commands: list[list[Any]], dot: Any, root: Any) -> Any:
        value: Any = _UNSET
        for cmd in commands:
            extra = () if value is _UNSET else (value,)
            value = self._command(cmd, dot, root, extra)
        return value

    def _command(self, cmd: list[Any], dot: Any, root: Any, extra: tuple[Any, ...]) -> Any:
        head = cmd[0]
        if isinstance(head, str) and head in _FUNCS:
            args = [self._operand(a, dot, root) for a in cmd[1:]] + list(extra)
            try:
                return _FUNCS[head](*args)
            except (TypeError, ValueError, IndexError, KeyError, re.error) as exc:
                raise GoTemplateError(f"{head}: {exc}") from None
        if len(cmd) > 1 or extra:
            raise GoTemplateError(f"{head!r} takes no arguments")
        return self._operand(head, dot, root)

    def _operand(self, tok: Any, dot: Any, root: Any) -> Any:
        if isinstance(tok, tuple):
            value = self._pipe(tok[1], dot, root)
            for name in (p for p in (tok[2] if len(tok) > 2 else "").split(".") if p):
                value = _field(value, name)
            return value
        if tok in ("true", "false"):
            return tok == "true"
        if tok == "nil":
            return None
        if tok[0] in "\"`":
            return tok[1:-1] if tok[0] == "`" else bytes(tok[1:-1], "utf-8").decode("unicode_escape")
        if re.fullmatch(r"-?\d+", tok):
            return int(tok)
        if re.fullmatch(r"-?\d+\.\d+", tok):
            return float(tok)
        base, path = (root, tok[1:]) if tok.startswith("$") else (dot, tok)
        for name in (p for p in path.split(".") if p):
            base = _field(base, name)
        return base


_UNSET = object()


def _field(value: Any, name: str) -> Any:
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
