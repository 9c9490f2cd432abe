"""Request bodies of the demo's services, validated once for both (InputError names what is wrong)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from starlette.requests import Request

from inferwatch._exceptions import InputError
from inferwatch.demo._model import FEATURES

__all__ = ["feature_row", "number", "read_json"]


async def read_json(request: Request) -> dict[str, Any]:
    """The body as a JSON object."""
    try:
        body = json.loads(await request.body())
    except (ValueError, UnicodeDecodeError) as exc:
        raise InputError(f"body is not valid JSON: {exc}") from exc
    if not isinstance(body, dict):
        raise InputError("body must be a JSON object")
    return body


def feature_row(body: Mapping[str, Any]) -> np.ndarray[Any, np.dtype[np.float64]]:
    """The ``features`` object as a row in FEATURES order; InputError naming what is wrong."""
    feats = body.get("features")
    if not isinstance(feats, dict):
        raise InputError("'features' must be an object of feature name -> number")
    return np.array([number(feats, name, -math.inf, math.inf, where="features.") for name in FEATURES])


def number(obj: Mapping[str, Any], key: str, lo: float, hi: float, *, where: str = "") -> float:
    """``obj[key]`` as a finite number in ``[lo, hi]``."""
    if key not in obj:
        raise InputError(f"{where}{key}: missing")
    v = obj[key]
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or not lo <= v <= hi:
        raise InputError(f"{where}{key}: expected a finite number in [{lo}, {hi}], got {v!r}")
    return float(v)
