"""Sloth's ``prometheus/v1`` spec files, read as they are (https://sloth.dev, pkg/prometheus/api/v1).

    version: "prometheus/v1"
    service: "myservice"
    labels: {owner: "myteam"}
    slos:
      - name: "requests-availability"
        objective: 99.9
        sli:
          events:
            error_query: sum(rate(http_requests_total{code=~"5.."}[{{.window}}]))
            total_query: sum(rate(http_requests_total[{{.window}}]))
        alerting:
          name: MyServiceHighErrorRate
          page_alert: {labels: {severity: pageteam}}
          ticket_alert: {labels: {severity: slack}}
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import Field, ValidationError, field_validator, model_validator

from inferwatch._exceptions import ConfigError
from inferwatch.model import is_valid_label_name, is_valid_metric_name
from inferwatch.settings import FrozenModel, SloFileRef
from inferwatch.slo._model import WINDOW_TEMPLATE, AlertSpec, EventsSli, RawSli, Slo

__all__ = ["load_sloth_file", "parse_sloth_spec"]

_NAME = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9_-]*$")  # Sloth: service and SLO names make the sloth_id
_WINDOW = re.compile(r"\{\{\s*\.window\s*\}\}")


def _labels(v: dict[str, str]) -> dict[str, str]:
    bad = [k for k in v if not is_valid_label_name(k)]
    if bad:
        raise ValueError(f"invalid label names {bad}")
    return {k: str(x) for k, x in v.items()}


class _Events(FrozenModel):
    error_query: str = Field(min_length=1)
    total_query: str = Field(min_length=1)


class _Raw(FrozenModel):
    error_ratio_query: str = Field(min_length=1)


class _Sli(FrozenModel):
    events: _Events | None = None
    raw: _Raw | None = None
    plugin: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _one(self) -> _Sli:
        if self.plugin is not None:
            raise ValueError("SLI plugins are not supported: write the events or raw queries")
        if (self.events is None) == (self.raw is None):
            raise ValueError("an SLI needs exactly one of events (error_query, total_query) or raw")
        return self


class _Notify(FrozenModel):
    disable: bool = False
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)

    _l = field_validator("labels")(_labels)


class _Alerting(FrozenModel):
    name: str = ""
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)
    page_alert: _Notify = Field(default_factory=_Notify)
    ticket_alert: _Notify = Field(default_factory=_Notify)

    _l = field_validator("labels")(_labels)

    @model_validator(mode="after")
    def _named(self) -> _Alerting:
        if not (self.page_alert.disable and self.ticket_alert.disable):
            if not self.name:
                raise ValueError("alerting.name is required unless both page and ticket alerts are disabled")
            if not is_valid_metric_name(self.name):
                raise ValueError(f"alerting.name {self.name!r} must be a valid alert name")
        return self


class _SloEntry(FrozenModel):
    name: str
    objective: float = Field(gt=0, lt=100, description="percent, e.g. 99.9")
    description: str = ""
    labels: dict[str, str] = Field(default_factory=dict)
    sli: _Sli
    alerting: _Alerting

    _l = field_validator("labels")(_labels)

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not _NAME.match(v):
            raise ValueError(f"SLO name {v!r} must be letters, digits, '-' or '_'")
        return v


class SlothSpec(FrozenModel):
    """A whole ``prometheus/v1`` document."""

    version: Literal["prometheus/v1"]
    service: str
    labels: dict[str, str] = Field(default_factory=dict)
    slos: tuple[_SloEntry, ...] = Field(min_length=1)

    _l = field_validator("labels")(_labels)

    @field_validator("service")
    @classmethod
    def _service(cls, v: str) -> str:
        if not _NAME.match(v):
            raise ValueError(f"service {v!r} must be letters, digits, '-' or '_'")
        return v

    @model_validator(mode="after")
    def _unique(self) -> SlothSpec:
        names = [s.name for s in self.slos]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"SLO {twice[0]!r} is defined twice")
        return self


def _check_query(q: str, where: str) -> str:
    if not _WINDOW.search(q):
        raise ConfigError(f"{where}: the query has no {WINDOW_TEMPLATE} for the window: {q.strip()}")
    return _WINDOW.sub(WINDOW_TEMPLATE, q)  # as written, line breaks and all: Sloth keeps them


def _slo(spec: SlothSpec, i: int, entry: _SloEntry, ref: SloFileRef, source: str) -> Slo:
    where = f"{source}: slos[{i}] ({entry.name})"
    sli: EventsSli | RawSli
    if entry.sli.events is not None:
        e = entry.sli.events
        sli = EventsSli(_check_query(e.error_query, f"{where}.sli.events.error_query"),
                        _check_query(e.total_query, f"{where}.sli.events.total_query"))
    else:
        assert entry.sli.raw is not None
        sli = RawSli(_check_query(entry.sli.raw.error_ratio_query, f"{where}.sli.raw.error_ratio_query"))
    a = entry.alerting
    alerting = AlertSpec(
        a.name, a.labels, a.annotations, a.page_alert.labels, a.page_alert.annotations,
        a.ticket_alert.labels, a.ticket_alert.annotations, page=not a.page_alert.disable,
        ticket=not a.ticket_alert.disable)
    return Slo(spec.service, entry.name, entry.objective, sli, alerting, period=ref.period,
               labels={**spec.labels, **entry.labels}, description=entry.description,
               min_events=ref.min_events, tiers=ref.tiers, source=where)


def parse_sloth_spec(text: str, ref: SloFileRef | None = None, *, source: str = "<spec>") -> list[Slo]:
    """The SLOs of a spec's text; ``ConfigError`` naming the source, the field and the value."""
    ref = ref or SloFileRef(path=source)
    try:
        docs = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as exc:
        raise ConfigError(f"{source}: invalid YAML: {exc}") from None
    out: list[Slo] = []
    for doc in docs:
        try:
            spec = SlothSpec.model_validate(doc)
        except ValidationError as exc:
            raise ConfigError(_describe(exc, source)) from None
        out += [_slo(spec, i, e, ref, source) for i, e in enumerate(spec.slos)]
    if not out:
        raise ConfigError(f"{source}: no prometheus/v1 spec in the file")
    return out


def load_sloth_file(ref: SloFileRef) -> list[Slo]:
    """Read one ``slo_files`` entry (a path relative to the working directory, or absolute)."""
    path = Path(ref.path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"slo_files: cannot read {path}: {exc}") from None
    return parse_sloth_spec(text, ref, source=str(path))


def _describe(exc: ValidationError, source: str) -> str:
    lines = []
    for err in exc.errors():
        loc = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err["loc"]).lstrip(".")
        msg = err["msg"].removeprefix("Value error, ")
        got = "" if err["type"] in ("missing", "extra_forbidden") else f" (got {err.get('input')!r:.60})"
        if err["type"] == "extra_forbidden":
            msg = "unknown field"
        lines.append(f"{source}: {loc or '<root>'}: {msg}{got}")
    return "\n".join(lines)
