"""The subset of Go's text/template that Alertmanager's message fields are written in.

    {{ .CommonLabels.alertname }}  {{ .Alerts.Firing | len }}  {{ range .Alerts }}...{{ end }}
    {{ if eq .Status "firing" }}...{{ else }}...{{ end }}  {{ printf "%.1f" 2.25 }}
    {{ join ", " .GroupLabels.Values }}  {{ reReplaceAll "(.*):.*" "$1" .Labels.instance | toUpper }}

Supported: text with ``{{- ... -}}`` trimming and comments; pipelines (``|``) of fields
(``.A.B``, ``$.A``), string, number and boolean literals, parenthesised pipelines; ``if`` /
``else if`` / ``else``, ``range`` (with ``else``), ``with``; Go's ``and or not eq ne lt le gt
ge len index print printf println`` and Alertmanager's ``toUpper toLower title join safeHtml
reReplaceAll match stringSlice``; the methods ``.Firing``, ``.Resolved``, ``.SortedPairs``,
``.Names``, ``.Values``; ``{{ define "name" }}`` (at the top level), ``{{ template "name" . }}``
and ``{{ block "name" . }}``, with the definitions of a ``templates:`` file given as a library
(its text outside definitions is never run, as in Go; a later definition replaces an earlier
one, as Alertmanager's files override its defaults). Anything else (variables, ``break``,
other functions, a template that is not defined) is refused when the template is parsed,
naming the construct: never rendered as something other than what Alertmanager would send.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from inferwatch.settings._gotemplate_values import (
    FUNCS,
    KV,
    GoTemplateError,
    GoTime,
    field,
    go_str,
    template_data,
    truth,
)

__all__ = ["KV", "GoTemplate", "GoTemplateError", "GoTime", "template_data"]

_ACTION = re.compile(r"\{\{(- )?(.*?)( -)?\}\}", re.S)
_TOKEN = re.compile(r'\s*("(?:\\.|[^"\\])*"|`[^`]*`|-?\d+(?:\.\d+)?|\(|\)|\||\$?(?:\.[A-Za-z0-9_]+)+|\.'
                    r"|\$[A-Za-z0-9_]*|:?=|,|[A-Za-z_][A-Za-z0-9_]*)")
_KEYWORDS = {"if", "else", "end", "range", "with"}
_REFUSED = {"break", "continue"}
_MAX_DEPTH = 100  # nested {{ template }} calls (Go stops at 100,000; a loop is an error either way)


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
    def __init__(self, parts: list[tuple[str, str]], defines: dict[str, tuple[_Node, ...]]) -> None:
        self.parts, self.i = parts, 0
        self.defines = defines
        self.called: set[str] = set()
        self.own: set[str] = set()  # defined in this text: twice is an error (across files: replaced)
        self.depth = 0

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
            if head in ("define", "template", "block"):
                nodes += self.named(head, toks[1:], top=not until and self.depth == 0)
            elif head in ("if", "range", "with"):
                nodes.append(self.control(head, toks[1:]))
            elif head in _KEYWORDS:
                raise GoTemplateError(f"unexpected '{{{{ {src} }}}}'")
            else:
                nodes.append(_Node("action", _pipeline(toks)))
        if until:
            raise GoTemplateError(f"missing '{{{{ end }}}}' (open: {until})")
        return tuple(nodes), ""

    def named(self, head: str, toks: list[str], *, top: bool) -> list[_Node]:
        """``define`` (stored, no output), ``template`` (a call) or ``block`` (both)."""
        if not toks or not re.fullmatch(r'"[^"\\]*"|`[^`]*`', toks[0]):
            raise GoTemplateError(f"'{{{{ {head} }}}}' needs a template name in quotes")
        name, rest = toks[0][1:-1], toks[1:]
        if head in ("define", "block"):
            if name in self.own:
                raise GoTemplateError(f'multiple definition of template "{name}"')
            self.own.add(name)
            if head == "define" and (rest or not top):
                raise GoTemplateError(f'{{{{ define "{name}" }}}}: only at the top level, nothing after')
            self.depth += 1
            self.defines[name], _ = self.block(("end",))
            self.depth -= 1
        if head == "define":
            return []
        self.called.add(name)
        return [_Node("template", (name, _pipeline(rest) if rest else None))]

    def control(self, head: str, toks: list[str]) -> _Node:
        if any(t in (":=", "=") for t in toks):
            raise GoTemplateError("variables ($x := ...) are outside inferwatch's Go template subset")
        self.depth += 1
        try:
            return self._control(head, toks)
        finally:
            self.depth -= 1

    def _control(self, head: str, toks: list[str]) -> _Node:
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
        if isinstance(head, str) and re.fullmatch(r"[A-Za-z_]\w*", head) and head not in FUNCS \
                and head not in ("true", "false", "nil"):
            raise GoTemplateError(f"function {head!r} is outside inferwatch's Go template subset")
    return commands


class GoTemplate:
    """A parsed template; ``render(data)`` with Alertmanager's data as nested dicts and lists.

    >>> GoTemplate('{{ .CommonLabels.alertname | toUpper }}: {{ len .Alerts }}').render(
    ...     {"CommonLabels": {"alertname": "Slow"}, "Alerts": [{}, {}]})
    'SLOW: 2'
    """

    def __init__(self, source: str, library: tuple[str, ...] | list[str] = ()) -> None:
        self.source = source
        self._defines: dict[str, tuple[_Node, ...]] = {}
        called: set[str] = set()
        for text in library:  # a templates: file: its definitions only
            lib = _Parser(_split(text), self._defines)
            lib.block(())
            called |= lib.called
        parser = _Parser(_split(source), self._defines)
        self._nodes, _ = parser.block(())
        missing = sorted((called | parser.called) - set(self._defines))
        if missing:
            raise GoTemplateError(f'template "{missing[0]}" is not defined (inferwatch renders the '
                                  "definitions of the templates: files, not Alertmanager's defaults)")

    def render(self, data: Any) -> str:
        """The text, as Alertmanager's template would write it."""
        out: list[str] = []
        self._run(self._nodes, data, data, out)
        return "".join(out)

    def _run(self, nodes: tuple[_Node, ...], dot: Any, root: Any, out: list[str], depth: int = 0) -> None:
        for n in nodes:
            if n.kind == "text":
                out.append(n.value)
            elif n.kind == "action":
                out.append(go_str(self._pipe(n.value, dot, root)))
            elif n.kind == "template":
                if depth >= _MAX_DEPTH:
                    raise GoTemplateError(f'template "{n.value[0]}": nested more than {_MAX_DEPTH} deep')
                arg = self._pipe(n.value[1], dot, root) if n.value[1] is not None else None
                self._run(self._defines[n.value[0]], arg, arg, out, depth + 1)
            else:
                value = self._pipe(n.value, dot, root)
                if n.kind == "range" and truth(value):
                    items = sorted(value.items()) if isinstance(value, dict) else value
                    for item in (v for _, v in items) if isinstance(value, dict) else items:
                        self._run(n.body, item, root, out, depth)
                elif truth(value):
                    self._run(n.body, value if n.kind == "with" else dot, root, out, depth)
                else:
                    self._run(n.other, dot, root, out, depth)

    def _pipe(self, commands: list[list[Any]], dot: Any, root: Any) -> Any:
        value: Any = _UNSET
        for cmd in commands:
            extra = () if value is _UNSET else (value,)
            value = self._command(cmd, dot, root, extra)
        return value

    def _command(self, cmd: list[Any], dot: Any, root: Any, extra: tuple[Any, ...]) -> Any:
        head = cmd[0]
        if isinstance(head, str) and head in FUNCS:
            args = [self._operand(a, dot, root) for a in cmd[1:]] + list(extra)
            try:
                return FUNCS[head](*args)
            except (TypeError, ValueError, IndexError, KeyError, re.error) as exc:
                raise GoTemplateError(f"{head}: {exc}") from None
        if len(cmd) > 1 or extra:
            raise GoTemplateError(f"{head!r} takes no arguments")
        return self._operand(head, dot, root)

    def _operand(self, tok: Any, dot: Any, root: Any) -> Any:
        if isinstance(tok, tuple):
            value = self._pipe(tok[1], dot, root)
            for name in (p for p in (tok[2] if len(tok) > 2 else "").split(".") if p):
                value = field(value, name)
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
            base = field(base, name)
        return base


_UNSET = object()
