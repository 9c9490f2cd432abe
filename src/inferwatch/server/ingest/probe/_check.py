"""Whether an answer is the expected one: status, body regexes, a value at a JSON path.

>>> json_value({"choices": [{"text": "hi"}]}, "$.choices[0].text")
(True, 'hi')
>>> json_value({"a": 1}, "$.b")
(False, None)
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from inferwatch.config import ProbeExpect
from inferwatch.server.ingest.probe._http import Exchange

__all__ = ["Verdict", "check_answer", "json_value", "shown", "value_text"]

_STEP = re.compile(r"\.([A-Za-z_][A-Za-z0-9_-]*)|\[(\d+)\]|\[['\"]([^'\"]+)['\"]\]")


def json_value(doc: Any, path: str) -> tuple[bool, Any]:
    """The value at ``path`` (``$.a.b[0]['c']``, checked at config load) in ``doc``: (found, value)."""
    value, pos, rest = doc, 0, path[1:]
    while pos < len(rest):
        m = _STEP.match(rest, pos)
        if m is None:
            return False, None
        pos = m.end()
        key, index = m.group(1) or m.group(3), m.group(2)
        if index is not None:
            if not isinstance(value, list) or int(index) >= len(value):
                return False, None
            value = value[int(index)]
        elif isinstance(value, dict) and key in value:
            value = value[key]
        else:
            return False, None
    return True, value


def value_text(value: Any) -> str:
    """A JSON value as a regex or substring sees it: strings as they are, the rest as JSON."""
    return value if isinstance(value, str) else json.dumps(value)


def shown(text: str, limit: int = 80) -> str:
    """``text`` cut to ``limit`` characters for a message (an ellipsis says it was cut)."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class Verdict:
    """The answer's judgement: ``ok``, why not, and which of blackbox's failure series it sets."""

    ok: bool
    reason: str = ""
    regex_failed: bool = False
    json_failed: bool = False


def _status(status: int, codes: tuple[int, ...]) -> str:
    if codes and status not in codes:
        return f"status {status}, expected {' or '.join(map(str, codes))}"
    if not codes and not 200 <= status < 300:
        return f"status {status}, expected 2xx"
    return ""


def _json(body: bytes, expect: ProbeExpect) -> str:
    assert expect.json_path is not None
    try:
        doc = json.loads(body)
    except ValueError:
        return f"body is not JSON: {shown(body.decode('utf-8', 'replace'))!r}"
    found, value = json_value(doc, expect.json_path)
    if not found:
        return f"{expect.json_path} not in the answer"
    if expect.equals is not None and value != expect.equals:
        want = shown(value_text(expect.equals))
        return f"{expect.json_path} is {shown(value_text(value))!r}, expected {want!r}"
    if expect.regex is not None and not re.search(expect.regex, value_text(value)):
        return f"{expect.json_path} is {shown(value_text(value))!r}, does not match {expect.regex!r}"
    return ""


def check_answer(ex: Exchange, expect: ProbeExpect) -> Verdict:
    """Judge one exchange against ``expect`` (an exchange that failed is a failure with its error)."""
    if ex.error:
        return Verdict(False, ex.error)
    reason = _status(ex.status, expect.status)
    if reason:
        return Verdict(False, reason)
    text = ex.body.decode("utf-8", "replace")
    if expect.body_regex is not None and not re.search(expect.body_regex, text):
        return Verdict(False, f"body does not match {expect.body_regex!r}", regex_failed=True)
    if expect.body_not_regex is not None and re.search(expect.body_not_regex, text):
        return Verdict(False, f"body matches {expect.body_not_regex!r}", regex_failed=True)
    if expect.json_path is not None:
        reason = _json(ex.body, expect)
        if reason:
            return Verdict(False, reason, json_failed=True)
    return Verdict(True)
