"""A runner for Prometheus's PromQL test scripts (``promql/testdata/*.test``), over inferwatch's engine.

The format and its checks follow Prometheus 2.42's ``promql/test.go``:

- ``load <gap>`` then lines ``series values`` (promtool's notation, ``0+10x10``, ``_``, ``stale``);
  the i-th value lies at ``i * gap`` from time 0;
- ``clear`` empties the store;
- ``eval[_fail|_ordered] instant at <duration> <expr>`` then the expected samples, one
  ``series value`` a line (or one number: a scalar). ``_fail`` expects an error, ``_ordered``
  the result in the listed order. As upstream, each query is also evaluated with ``@`` set to
  its time on every selector at -10t, 0, t/5, t and 10t (unless it calls a function whose
  result depends on the evaluation time), and each of those again as a range query from
  t - 1m to t + 1m, whose middle step must give the same samples;
- ``eval[_fail] range from <d> to <d> step <d> <expr>`` (the later upstream form, used by the
  team's own cases) then ``series values`` with one value per step (``_`` for none).

Values compare as upstream: equal, both NaN, or within a relative error of 1e-6.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from inferwatch.model import Labels, MatchOp, Sample, parse_duration, parse_matchers
from inferwatch.promql import (
    AtMod,
    Call,
    Engine,
    EvalError,
    Expr,
    Matrix,
    PromQLError,
    Selector,
    Subquery,
    parse_promql,
)
from inferwatch.rules._notation import expand_values
from inferwatch.store import MemoryStore

__all__ = ["Case", "Outcome", "parse_script", "run_file", "run_script"]

_EVAL_INSTANT = re.compile(r"^eval(?:_(fail|ordered))?\s+instant\s+(?:at\s+(.+?))?\s+(.+)$")
_EVAL_RANGE = re.compile(r"^eval(?:_(fail))?\s+range\s+from\s+(\S+)\s+to\s+(\S+)\s+step\s+(\S+)\s+(.+)$")
_LOAD = re.compile(r"^load\s+(.+?)$")
# the functions whose result depends on the evaluation time even when their arguments do not
_AT_UNSAFE = frozenset({"days_in_month", "day_of_month", "day_of_week", "day_of_year", "hour",
                        "minute", "month", "year", "predict_linear", "time", "timestamp"})
_EPSILON = 1e-6
_MIN_NORMAL = 2.2250738585072014e-308

Expected = dict[Labels | None, tuple[int, list[float | None]]]  # None: a scalar


@dataclass
class Case:
    """One ``eval`` command with what it expects."""

    line: int
    expr: str
    mode: str  # "" | "fail" | "ordered"
    start: float  # seconds
    end: float | None = None  # a range eval: its end and step
    step: float = 0.0
    expected: Expected = field(default_factory=dict)


@dataclass
class _Load:
    gap: float
    series: list[tuple[Labels, list[float | None]]]


Command = Case | _Load | None  # None: clear


@dataclass(frozen=True)
class Outcome:
    """What one case gave: ``error`` is empty when it passed."""

    source: str
    line: int
    expr: str
    error: str

    @property
    def passed(self) -> bool:
        """Whether inferwatch agreed with the expectation."""
        return not self.error


def almost_equal(a: float, b: float) -> bool:
    """Prometheus's test comparison: equal, both NaN, or a relative error under 1e-6."""
    if math.isnan(a) and math.isnan(b):
        return True
    if a == b:
        return True
    diff = abs(a - b)
    if a == 0 or b == 0 or diff < _MIN_NORMAL:
        return diff < _EPSILON * _MIN_NORMAL
    return diff / (abs(a) + abs(b)) < _EPSILON


def _split_desc(line: str) -> tuple[str, str]:
    """``series`` and ``values`` of a ``series values`` line (braces may hold quoted spaces)."""
    brace = line.find("{")
    space = re.search(r"\s", line)
    if brace < 0 or (space is not None and space.start() < brace):
        if space is None:
            raise ValueError(f"no values in {line!r}")
        return line[:space.start()], line[space.start():].strip()
    quoted, i = False, brace
    while i < len(line):
        c = line[i]
        if c == "\\" and quoted:
            i += 2
            continue
        if c == '"':
            quoted = not quoted
        elif c == "}" and not quoted:
            return line[:i + 1], line[i + 1:].strip()
        i += 1
    raise ValueError(f"missing '}}' in {line!r}")


def _labels(series: str) -> Labels:
    name, _, rest = series.partition("{")
    labels: dict[str, str] = {}
    if rest:
        for m in parse_matchers("{" + rest):
            if m.op is not MatchOp.EQ:
                raise ValueError(f"labels use '=' only: {series!r}")
            labels[m.name] = m.value
    if name.strip():
        labels["__name__"] = name.strip()
    return Labels(labels)


def _number(text: str) -> float | None:
    try:
        return float(int(text, 0)) if re.fullmatch(r"[+-]?(0x[0-9a-fA-F]+|[0-9]+)", text) else float(text)
    except ValueError:
        return None


def _duration(text: str) -> float:
    return 0.0 if text == "0" else parse_duration(text)  # Prometheus's model.ParseDuration takes "0"


def _block(lines: list[str], i: int) -> tuple[int, list[tuple[int, str]]]:
    out = []
    while i + 1 < len(lines) and lines[i + 1]:
        i += 1
        out.append((i, lines[i]))
    return i, out


def parse_script(text: str) -> list[Command]:
    """The commands of a test script (comments are lines starting with ``#``)."""
    lines = ["" if ln.strip().startswith("#") else ln.strip() for ln in text.split("\n")]
    cmds: list[Command] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        word = line.split(maxsplit=1)[0].lower() if line else ""
        if not line:
            pass
        elif word == "clear":
            cmds.append(None)
        elif word == "load":
            m = _LOAD.match(line)
            if not m:
                raise ValueError(f"line {i + 1}: invalid load command {line!r}")
            i, body = _block(lines, i)
            # a series defined twice in one load keeps its last definition, as upstream's map does
            defs = {_labels(s): expand_values(v) for s, v in map(_split_desc, (b for _, b in body))}
            cmds.append(_Load(_duration(m[1]), list(defs.items())))
        elif word.startswith("eval"):
            i, case = _parse_eval(lines, i)
            cmds.append(case)
        else:
            raise ValueError(f"line {i + 1}: invalid command {line!r}")
        i += 1
    return cmds


def _parse_eval(lines: list[str], i: int) -> tuple[int, Case]:
    line, at = lines[i], i + 1
    m = _EVAL_INSTANT.match(line)
    if m:
        case = Case(at, m[3], m[1] or "", _duration(m[2] or "0"))
    elif r := _EVAL_RANGE.match(line):
        case = Case(at, r[5], r[1] or "", _duration(r[2]), _duration(r[3]), _duration(r[4]))
    else:
        raise ValueError(f"line {at}: invalid evaluation command {line!r}")
    i, body = _block(lines, i)
    for pos, (_, text) in enumerate(body, start=1):
        number = _number(text)
        if number is not None and case.end is None:
            case.expected[None] = (pos, [number])
            break
        series, values = _split_desc(text)
        case.expected[_labels(series)] = (pos, expand_values(values))
    return i, case


def _with_at(e: Expr, t: float) -> tuple[Expr, bool]:
    """``e`` with ``@ t`` on every selector and subquery outside a subquery; and whether it is safe."""
    if isinstance(e, Selector):
        return (e if e.at is not None else dataclasses.replace(e, at=AtMod(t))), True
    if isinstance(e, Subquery):
        return (e if e.at is not None else dataclasses.replace(e, at=AtMod(t))), True
    safe = not (isinstance(e, Call) and e.func in _AT_UNSAFE)
    changes = {}
    for f in dataclasses.fields(e):  # type: ignore[arg-type]
        value = getattr(e, f.name)
        if isinstance(value, tuple) and value and all(_is_expr(v) for v in value):
            pairs = [_with_at(v, t) for v in value]
            changes[f.name] = tuple(p[0] for p in pairs)
            safe = safe and all(p[1] for p in pairs)
        elif _is_expr(value):
            changes[f.name], ok = _with_at(value, t)
            safe = safe and ok
    return dataclasses.replace(e, **changes), safe  # type: ignore[type-var]


def _is_expr(v: object) -> bool:
    return dataclasses.is_dataclass(v) and type(v).__module__ == Selector.__module__ \
        and type(v).__name__ not in ("Matching", "AtMod")


def _compare_vector(case: Case, got: list[tuple[Labels, float]], ordered: bool) -> str:
    seen = set()
    for pos, (labels, value) in enumerate(got, start=1):
        if labels not in case.expected:
            return f"unexpected metric {labels} in result"
        want_pos, want = case.expected[labels]
        if ordered and want_pos != pos:
            return f"expected metric {labels} at position {want_pos} but was at {pos}"
        if want[0] is None or not almost_equal(want[0], value):
            return f"expected {want[0]} for {labels} but got {value}"
        seen.add(labels)
    missing = [k for k in case.expected if k not in seen]
    if missing:
        return f"expected metric {missing[0] if missing[0] is not None else 'scalar'} not found"
    return ""


def _compare(case: Case, value: object, ordered: bool) -> str:
    if isinstance(value, Matrix):
        return "received range result on instant evaluation"
    if isinstance(value, float):
        want = case.expected.get(None)
        if want is None:
            return f"got scalar {value}, expected a vector"
        if almost_equal(want[1][0] or 0.0, value):
            return ""
        return f"expected scalar {want[1][0]} but got {value}"
    if isinstance(value, str):
        return f"got string {value!r}"
    return _compare_vector(case, value, ordered)  # type: ignore[arg-type]


def _run_instant(engine: Engine, case: Case) -> str:
    expr = parse_promql(case.expr)
    t_ms = round(case.start * 1000)
    variants: list[tuple[Expr, float]] = [(expr, case.start)]
    at_expr, safe = _with_at(expr, case.start)
    if safe:
        times = [-1000, 0, 1000] if t_ms == 0 else [-10 * t_ms, 0, t_ms // 5, t_ms, 10 * t_ms]
        variants += [(at_expr, ms / 1000) for ms in times]
    for query, t in variants:
        try:
            value = engine.instant(query, t).value
        except (EvalError, PromQLError) as exc:
            if case.mode == "fail":
                continue
            return f"error evaluating {query} at {t}: {exc}"
        if case.mode == "fail":
            return f"expected an error evaluating {query} at {t} but got none"
        error = _compare(case, value, case.mode == "ordered")
        if error:
            return f"{query} at {t}: {error}"
        error = _range_mode(engine, case, query, t, isinstance(value, float))
        if error:
            return f"{query} at {t} (range mode): {error}"
    return ""


def _range_mode(engine: Engine, case: Case, query: Expr, t: float, scalar: bool) -> str:
    try:
        result = engine.range(query, t - 60, t + 60, 60)
    except (EvalError, PromQLError) as exc:
        return f"error: {exc}"
    if case.mode == "ordered":
        return ""  # order is not defined for range queries
    vec = [(labels, v) for labels, points in result.series for ts, v in points if ts == t]
    if scalar:
        return _compare(case, vec[0][1] if vec else math.nan, False)
    return _compare_vector(case, vec, False)


def _run_range(engine: Engine, case: Case) -> str:
    assert case.end is not None
    try:
        result = engine.range(case.expr, case.start, case.end, case.step)
    except (EvalError, PromQLError) as exc:
        return "" if case.mode == "fail" else f"error: {exc}"
    if case.mode == "fail":
        return "expected an error but got none"
    steps = round((case.end - case.start) / case.step) + 1
    times = [case.start + k * case.step for k in range(steps)]
    got = {labels: dict(points) for labels, points in result.series}
    for labels, points in got.items():
        if labels not in case.expected:
            return f"unexpected series {labels} in result"
        want = dict(zip(times, case.expected[labels][1], strict=False))
        for ts in times:
            w, g = want.get(ts), points.get(ts)
            if (w is None) != (g is None) or (w is not None and g is not None and not almost_equal(w, g)):
                return f"{labels} at {ts}: expected {w} but got {g}"
    missing = [k for k in case.expected if k not in got]
    return f"expected series {missing[0]} not found" if missing else ""


def run_script(text: str, source: str = "<script>") -> list[Outcome]:
    """Run every command of a script; one outcome per ``eval``."""
    store = MemoryStore()
    out = []
    for cmd in parse_script(text):
        if cmd is None:
            store = MemoryStore()
        elif isinstance(cmd, _Load):
            samples = [Sample(labels, k * cmd.gap, v)
                       for labels, values in cmd.series for k, v in enumerate(values) if v is not None]
            store.append(sorted(samples, key=lambda s: s.t))
        else:
            engine = Engine(store)
            try:
                error = _run_instant(engine, cmd) if cmd.end is None else _run_range(engine, cmd)
            except (EvalError, PromQLError, ValueError) as exc:
                error = f"{type(exc).__name__}: {exc}"
            out.append(Outcome(source, cmd.line, cmd.expr, error))
    return out


def run_file(path: Path) -> list[Outcome]:
    """Run one ``.test`` file."""
    return run_script(path.read_text(encoding="utf-8"), path.name)
