"""Request parameters of Prometheus's HTTP API (web/api/v1/api.go): form or query, times, durations.

Parameters come from the query string or, for POST, an
``application/x-www-form-urlencoded`` body (the body wins, as Go's
``r.FormValue``); times are Unix seconds or RFC 3339; durations are seconds
or Prometheus durations. Errors carry Prometheus's wording.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import parse_qsl

from starlette.requests import Request

from inferwatch.model import parse_duration

__all__ = ["ApiError", "Params", "format_api_float", "read_params"]

MIN_TIME = -9223372036854775.808 / 1000 * 1000  # Prometheus's minTime/maxTime in seconds
MAX_TIME = 9223372036854775.807


class ApiError(Exception):
    """An API error: Prometheus's ``errorType`` and HTTP status."""

    def __init__(self, message: str, error_type: str = "bad_data", status: int = 400) -> None:
        super().__init__(message)
        self.error_type = error_type
        self.status = status


@dataclass(frozen=True)
class Params:
    """The merged form and query parameters of one request."""

    values: Mapping[str, list[str]]

    def get(self, name: str) -> str | None:
        """The first value of ``name`` (``None`` if absent)."""
        vs = self.values.get(name)
        return vs[0] if vs else None

    def all(self, name: str) -> list[str]:
        """Every value of ``name`` (``match[]`` repeats)."""
        return list(self.values.get(name, []))

    def time(self, name: str, default: float) -> float:
        """A timestamp parameter, or ``default`` when absent."""
        raw = self.get(name)
        if raw is None or raw == "":
            return default
        return parse_time(raw, name)

    def duration(self, name: str) -> float | None:
        """A duration parameter, or ``None`` when absent."""
        raw = self.get(name)
        if raw is None or raw == "":
            return None
        try:
            d = float(raw)
        except ValueError:
            try:
                return parse_duration(raw)
            except ValueError:
                msg = f'invalid parameter "{name}": cannot parse "{raw}" to a valid duration'
                raise ApiError(msg) from None
        if not math.isfinite(d) or abs(d) > 9.2e9:
            raise ApiError(f'invalid parameter "{name}": cannot parse "{raw}" to a valid duration. It '
                           "overflows int64")
        return d


def parse_time(raw: str, name: str) -> float:
    """Unix seconds (with fraction) or RFC 3339, as Prometheus's ``parseTime``."""
    try:
        t = float(raw)
        if math.isfinite(t):
            return round(t * 1000) / 1000
    except ValueError:
        pass
    try:
        return datetime.fromisoformat(raw.replace("Z", "+00:00")).timestamp()
    except ValueError:
        pass
    raise ApiError(f'invalid parameter "{name}": cannot parse "{raw}" to a valid timestamp')


async def read_params(req: Request) -> Params:
    """Query-string parameters merged with a POST form body (body values first)."""
    merged: dict[str, list[str]] = {}
    if req.method == "POST":
        ctype = req.headers.get("content-type", "")
        if ctype.startswith("application/x-www-form-urlencoded"):
            body = (await req.body()).decode("utf-8", errors="replace")
            for k, v in parse_qsl(body, keep_blank_values=True):
                merged.setdefault(k, []).append(v)
    for k, v in req.query_params.multi_items():
        merged.setdefault(k, []).append(v)
    return Params(merged)


def format_api_float(v: float) -> str:
    """A sample value as Prometheus's API writes it: 'f' format, 'e' below 1e-6 or from 1e21."""
    r = repr(v)
    if "e" not in r and "n" not in r:  # most values: Python's shortest digits are Go's 'f' (not NaN/Inf)
        return r.removesuffix(".0")
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    a = abs(v)
    if a != 0 and (a < 1e-6 or a >= 1e21):
        mant, _, exp = repr(v).partition("e")
        if not exp:  # repr chose fixed notation; redo in exponent form with shortest digits
            s = f"{v:e}"
            mant, _, exp = s.partition("e")
            mant = mant.rstrip("0").rstrip(".")
        sign = "-" if exp.startswith("-") else "+"
        digits = exp.lstrip("+-").lstrip("0")
        return f"{mant}e{sign}{digits.zfill(2)}"
    r = repr(float(v))
    if "e" in r:
        from decimal import Decimal

        return format(Decimal(r), "f")
    return r.removesuffix(".0")


def format_api_time(t: float) -> float | int:
    """A timestamp as a JSON number of seconds with millisecond precision."""
    ms = round(t * 1000)
    return ms // 1000 if ms % 1000 == 0 else ms / 1000
