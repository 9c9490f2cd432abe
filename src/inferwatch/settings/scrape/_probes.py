"""``probes``: the service seen from outside, as a user stands (blackbox_exporter's HTTP prober).

    probes:
      - name: ranker-predict
        url: http://127.0.0.1:8000/predict
        method: POST
        headers: {Content-Type: application/json}
        body: '{"x": 1}'
        interval: 15s
        timeout: 5s
        labels: {service: ranker}
        expect: {status: [200], json_path: "$.label", equals: "cat"}
      - name: ranker-golden
        url: http://127.0.0.1:8000/predict
        method: POST
        labels: {service: ranker}
        golden: {file: golden.jsonl, every: 15s}
      - name: chat
        url: http://127.0.0.1:8001/v1/chat/completions
        generative: {model: m, prompt: "Say OK", stream: true, expect: "(?i)ok"}

Each probe runs on its own schedule in ``serve``, never longer than its
timeout, never overlapping itself; its series carry its labels plus ``probe``
and ``instance`` (docs/probes.md).
"""

from __future__ import annotations

import re
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import Field, field_validator, model_validator

from inferwatch.model import is_valid_label_name
from inferwatch.settings._types import ByteSize, Duration, FrozenModel, Secret, http_url

__all__ = ["GenerativeSpec", "GoldenSpec", "ProbeExpect", "ProbeSpec", "ProbeTls", "check_json_path"]

_PATH_STEP = re.compile(r"\.([A-Za-z_][A-Za-z0-9_-]*)|\[(\d+)\]|\[['\"]([^'\"]+)['\"]\]")
_RESERVED_LABELS = ("probe", "instance", "job")


def check_json_path(path: str) -> str:
    """``path`` when it is the JSONPath subset probes read (``$.a.b[0]['c']``); else ``ValueError``."""
    if not path.startswith("$"):
        raise ValueError(f"json_path {path!r} must start with '$' (such as $.label or $.choices[0].text)")
    rest, pos = path[1:], 0
    while pos < len(rest):
        m = _PATH_STEP.match(rest, pos)
        if m is None:
            raise ValueError(f"json_path {path!r}: cannot read {rest[pos:]!r} (use .name, [0] or ['name'])")
        pos = m.end()
    return path


def _regex(value: str | None, what: str) -> str | None:
    if value is not None:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"{what} {value!r} is not a valid regular expression: {exc}") from None
    return value


class ProbeExpect(FrozenModel):
    """What a good answer is: its status, and a body regex or a JSON value (equal, or matching a regex)."""

    status: tuple[int, ...] = Field((), description="accepted status codes (default: any 2xx)")
    body_regex: str | None = Field(
        None, description="the body must match (blackbox's fail_if_body_not_matches_regexp)")
    body_not_regex: str | None = Field(
        None, description="the body must not match (fail_if_body_matches_regexp)")
    json_path: str | None = Field(None, description="a value in the JSON body, such as $.label")
    equals: Any = Field(None, description="the value at json_path must equal this")
    regex: str | None = Field(None, description="the value at json_path (as text) must match this")

    @field_validator("status")
    @classmethod
    def _codes(cls, v: tuple[int, ...]) -> tuple[int, ...]:
        for code in v:
            if not 100 <= code <= 599:
                raise ValueError(f"status {code} is not an HTTP status code (100-599)")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> ProbeExpect:
        _regex(self.body_regex, "body_regex")
        _regex(self.body_not_regex, "body_not_regex")
        _regex(self.regex, "regex")
        if self.json_path is not None:
            check_json_path(self.json_path)
            if self.equals is None and self.regex is None:
                raise ValueError("json_path needs equals or regex (what the value must be)")
        elif self.equals is not None or self.regex is not None:
            raise ValueError("equals and regex apply to the value at json_path: set json_path")
        return self


class ProbeTls(FrozenModel):
    """TLS for https:// probes: the CA to trust, or no verification (a self-signed test endpoint)."""

    insecure_skip_verify: bool = False
    ca_file: str | None = Field(None, description="PEM file of the CA that signs the server's certificate")


class GoldenSpec(FrozenModel):
    """A golden set: JSONL cases sent in rotation, each answer judged right or wrong (a canary)."""

    file: str = Field(description='JSONL, one case a line: {"body": {...}, "expect": {...}}')
    every: Duration = Field(60.0, gt=0, description="how often a run goes out")
    cases_per_run: int = Field(10, ge=1, le=1000, description="cases a run sends (the set in rotation)")
    window: int = Field(3, ge=1, le=1000, description="CanaryWrong judges the answers of the last N runs")
    threshold: float = Field(0.1, ge=0, lt=1, description="CanaryWrong when the wrong share is above this")


class GenerativeSpec(FrozenModel):
    """An OpenAI-compatible request: ``chat`` (chat/completions) or ``completions``, streamed or not."""

    api: Literal["chat", "completions"] = "chat"
    model: str = Field(min_length=1)
    prompt: str = Field("Reply with the word OK.", min_length=1)
    max_tokens: int = Field(16, ge=1, le=4096)
    stream: bool = True
    expect: str | None = Field(None, description="a regex the generated text must match")
    api_key: Secret | None = Field(None, description="sent as Authorization: Bearer")

    @field_validator("expect")
    @classmethod
    def _expect(cls, v: str | None) -> str | None:
        return _regex(v, "expect")


class ProbeSpec(FrozenModel):
    """One synthetic probe of an endpoint (HTTP, a generative API, or a golden set)."""

    name: str = Field(pattern=r"^[A-Za-z0-9_.:-]{1,100}$", description="the probe label of its series")
    url: str
    method: Literal["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] = "GET"
    headers: dict[str, Secret] = Field(default_factory=dict, description="sent as given (values secret)")
    body: str | dict[str, Any] | list[Any] | None = Field(None, description="text, or JSON sent as such")
    interval: Duration = Field(30.0, gt=0)
    timeout: Duration = Field(5.0, gt=0, description="the whole probe, redirects and body read included")
    labels: dict[str, str] = Field(default_factory=dict)
    expect: ProbeExpect = Field(default_factory=ProbeExpect)
    follow_redirects: bool = True
    max_redirects: int = Field(10, ge=0, le=50)
    max_body_bytes: ByteSize = Field(1 << 20, description="a longer body fails the probe (read no further)")
    tls: ProbeTls = Field(default_factory=ProbeTls)
    golden: GoldenSpec | None = None
    generative: GenerativeSpec | None = None

    @field_validator("url")
    @classmethod
    def _http_url(cls, url: str) -> str:
        return http_url(url, "http://127.0.0.1:8000/predict")

    @field_validator("labels")
    @classmethod
    def _label_names(cls, labels: dict[str, str]) -> dict[str, str]:
        for name in labels:
            if not is_valid_label_name(name) or name.startswith("__"):
                raise ValueError(f"invalid label name {name!r}")
            if name in _RESERVED_LABELS:
                raise ValueError(f"label {name!r} is set by the prober (the probe's name and URL)")
        return labels

    @model_validator(mode="after")
    def _consistent(self) -> ProbeSpec:
        if self.timeout > self.period:
            raise ValueError(f"timeout {self.timeout:g}s is longer than the interval {self.period:g}s "
                             "(a probe never overlaps itself)")
        if self.golden is not None and self.generative is not None:
            raise ValueError("a probe is either golden or generative, not both")
        if self.max_body_bytes <= 0:
            raise ValueError("max_body_bytes must be positive")
        return self

    @property
    def period(self) -> float:
        """Seconds between runs: ``golden.every`` for a golden set, else ``interval``."""
        return self.golden.every if self.golden is not None else self.interval

    @property
    def instance(self) -> str:
        """The ``instance`` label: the URL's host:port."""
        return urlsplit(self.url).netloc

    @property
    def kind(self) -> str:
        """``http``, ``golden`` or ``generative``."""
        return "golden" if self.golden else "generative" if self.generative else "http"


def check_probes(probes: tuple[ProbeSpec, ...]) -> tuple[ProbeSpec, ...]:
    """Names are unique (they name the series)."""
    seen: set[str] = set()
    for p in probes:
        if p.name in seen:
            raise ValueError(f"two probes named {p.name!r}")
        seen.add(p.name)
    return probes
