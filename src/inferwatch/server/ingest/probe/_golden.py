"""Golden-set canaries: known inputs with known answers, sent in rotation, each answer judged.

A case is one JSONL line: ``{"body": {...}, "expect": {...}}`` (optional ``"id"``,
default its line number). ``expect`` holds ``json_path`` (default: the whole
answer) and one test: ``equals`` (an exact class), ``value`` with
``tolerance`` (a number), ``regex``, ``contains`` (a substring) or ``schema``
(a JSON schema, checked with the ``jsonschema`` package).
"""

from __future__ import annotations

import json
import re
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema

from inferwatch._exceptions import ConfigError
from inferwatch.config import check_json_path
from inferwatch.server.ingest.probe._check import json_value, shown, value_text

__all__ = ["GoldenCase", "GoldenWindow", "judge", "load_golden"]

_TESTS = ("equals", "value", "regex", "contains", "schema")


@dataclass(frozen=True)
class GoldenCase:
    """One known input and what its answer must be."""

    id: str
    body: bytes
    expect: dict[str, Any]


def _case(obj: Any, where: str, line: int) -> GoldenCase:
    if not isinstance(obj, dict) or "body" not in obj or not isinstance(obj.get("expect"), dict):
        raise ConfigError(f'{where}: a case is {{"body": ..., "expect": {{...}}}}')
    expect = obj["expect"]
    tests = [t for t in _TESTS if t in expect]
    if len(tests) != 1:
        raise ConfigError(f"{where}: expect needs exactly one of {', '.join(_TESTS)}, got {sorted(expect)}")
    unknown = set(expect) - {*_TESTS, "json_path", "tolerance"}
    if unknown:
        raise ConfigError(f"{where}: unknown expect key {sorted(unknown)[0]!r}")
    try:
        check_json_path(expect.get("json_path", "$"))
        if "regex" in expect:
            re.compile(expect["regex"])
        if "schema" in expect:
            jsonschema.validators.validator_for(expect["schema"]).check_schema(expect["schema"])
        if "value" in expect and not isinstance(expect["value"], int | float):
            raise ValueError("value must be a number (use equals for text)")
    except (ValueError, re.error, jsonschema.SchemaError) as exc:
        raise ConfigError(f"{where}: {getattr(exc, 'message', exc)}") from None
    body = obj["body"]
    raw = body.encode() if isinstance(body, str) else json.dumps(body).encode()
    return GoldenCase(str(obj.get("id", line)), raw, dict(expect))


def load_golden(path: str | Path) -> list[GoldenCase]:
    """The cases of a JSONL golden file; ``ConfigError`` naming the file and line of a bad one."""
    p = Path(path)
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"golden file {p}: cannot read it: {exc}") from None
    cases = []
    for n, text in enumerate(lines, 1):
        if not text.strip():
            continue
        try:
            obj = json.loads(text)
        except ValueError as exc:
            raise ConfigError(f"{p}:{n}: not JSON: {exc}") from None
        cases.append(_case(obj, f"{p}:{n}", n))
    if not cases:
        raise ConfigError(f"golden file {p}: no cases")
    ids = [c.id for c in cases]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise ConfigError(f"golden file {p}: case id {twice[0]!r} appears twice")
    return cases


def _test(expect: dict[str, Any], value: Any) -> str:
    """"" when ``value`` passes the case's test, else what it got (shown short)."""
    got = shown(value_text(value), 60)
    if "equals" in expect:
        want = shown(value_text(expect["equals"]), 40)
        return "" if value == expect["equals"] else f"got {got!r}, want {want!r}"
    if "value" in expect:
        tol = float(expect.get("tolerance", 0.0))
        number = isinstance(value, int | float) and not isinstance(value, bool)
        ok = number and abs(value - expect["value"]) <= tol
        return "" if ok else f"got {got}, want {expect['value']}±{tol:g}"
    if "regex" in expect:
        hit = re.search(expect["regex"], value_text(value))
        return "" if hit else f"got {got!r}, want /{expect['regex']}/"
    if "contains" in expect:
        has = str(expect["contains"]) in value_text(value)
        return "" if has else f"got {got!r}, want …{expect['contains']}…"
    validator = jsonschema.validators.validator_for(expect["schema"])(expect["schema"])
    errors = sorted(validator.iter_errors(value), key=str)
    return "" if not errors else f"schema: {shown(errors[0].message, 60)}"


def judge(case: GoldenCase, status: int, body: bytes, error: str) -> str:
    """"" when the answer to ``case`` is right, else why it is wrong (short)."""
    if error:
        return shown(error, 60)
    if not 200 <= status < 300:
        return f"status {status}"
    try:
        doc = json.loads(body)
    except ValueError:
        doc = body.decode("utf-8", "replace")  # regex and contains still read a text answer
    path = case.expect.get("json_path", "$")
    found, value = json_value(doc, path)
    if not found:
        return f"{path} not in the answer"
    return _test(case.expect, value)


@dataclass(frozen=True)
class _Run:
    right: int
    wrong: list[tuple[str, str]]  # (case id, why)


class GoldenWindow:
    """The last ``runs`` runs' answers: the wrong share, and evidence kept while it stays over threshold.

    >>> w = GoldenWindow(runs=2, threshold=0.1)
    >>> w.add(2, []); w.ratio() is None
    True
    >>> w.add(1, [("7", "got 'dog', want 'cat'")]); round(w.ratio(), 3), w.evidence
    (0.25, "2 runs, 1 of 4 answers wrong: case 7: got 'dog', want 'cat'")
    """

    def __init__(self, runs: int, threshold: float, *, limit: int = 300) -> None:
        self._runs: deque[_Run] = deque(maxlen=runs)
        self.threshold, self.limit = threshold, limit
        self.evidence = ""

    def add(self, right: int, wrong: list[tuple[str, str]]) -> None:
        """Count one run's answers; the evidence is frozen while the ratio stays over the threshold."""
        self._runs.append(_Run(right, wrong))
        ratio = self.ratio()
        if ratio is None or ratio <= self.threshold:
            self.evidence = ""
        elif not self.evidence:
            self.evidence = self._describe()

    def answers(self) -> int:
        """Answers the window holds."""
        return sum(r.right + len(r.wrong) for r in self._runs)

    def ratio(self) -> float | None:
        """Share of wrong answers, once the window holds all its runs (else None: too few to judge)."""
        if len(self._runs) < (self._runs.maxlen or 0) or not self.answers():
            return None
        return sum(len(r.wrong) for r in self._runs) / self.answers()

    def _describe(self) -> str:
        wrong = [w for r in self._runs for w in r.wrong]
        n = len(self._runs)
        head = f"{n} run{'s' if n != 1 else ''}, {len(wrong)} of {self.answers()} answers wrong: "
        return shown(head + "; ".join(f"case {cid}: {why}" for cid, why in wrong), self.limit)
