"""The profile file: versioned JSON, validated with errors naming the file and the field.

    {"format": "inferwatch-profile", "version": 1, "bins": 10, "rows": 100000,
     "features": [
       {"name": "age", "type": "numeric", "edges": [..k cut points..],
        "proportions": [..k+1 fractions..], "count": 99990, "missing": 10, "min": 18, "max": 90},
       {"name": "country", "type": "categorical", "categories": ["de", "fr"],
        "proportions": [0.4, 0.6], "count": 100000, "missing": 0}],
     "confidence": null | {"edges": [...], "proportions": [...], "count": ..., "missing": ...,
                           "min": ..., "max": ...},
     "labelled": null | {"scores": [..P(class 1)..], "labels": [..0 or 1..]}}  (optional)

A multiclass model's ``labelled`` holds a row of its k >= 3 class probabilities per
row (``"scores": [[0.7, 0.2, 0.1], ...]``) and class indices 0..k-1 (the order of
``--score LABEL=COL,...``).

``edges`` are the interior cut points (outer bins open, see ``_binning``);
``count`` is the number of non-missing reference values, so counts per bin
are ``proportions · count``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from inferwatch._exceptions import InputError
from inferwatch.quality.profile._profile import CategoricalProfile, FeatureProfile, NumericProfile, Profile

__all__ = ["FORMAT", "VERSION", "dump_profile", "load_profile", "profile_from_json", "profile_to_json"]

FORMAT = "inferwatch-profile"
VERSION = 1


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _check_proportions(props: list[float], count: int) -> None:
    if any(p < 0 or not math.isfinite(p) for p in props):
        raise ValueError("proportions must be finite and non-negative")
    if count > 0 and abs(sum(props) - 1.0) > 1e-6:
        raise ValueError(f"proportions must sum to 1, they sum to {sum(props):.6g}")


class _Numeric(_Strict):
    name: str = Field(min_length=1)
    type: Literal["numeric"] = "numeric"
    edges: list[float]
    proportions: list[float]
    count: int = Field(ge=1)
    missing: int = Field(0, ge=0)
    min: float
    max: float

    @model_validator(mode="after")
    def _consistent(self) -> _Numeric:
        if not self.edges:
            raise ValueError("edges must hold at least one cut point")
        if any(not math.isfinite(e) for e in self.edges) or any(
            b <= a for a, b in zip(self.edges, self.edges[1:], strict=False)
        ):
            raise ValueError("edges must be finite and strictly increasing")
        if len(self.proportions) != len(self.edges) + 1:
            raise ValueError(
                f"proportions must have len(edges) + 1 = {len(self.edges) + 1} entries, "
                f"got {len(self.proportions)}"
            )
        _check_proportions(self.proportions, self.count)
        if self.min > self.max:
            raise ValueError(f"min {self.min} is above max {self.max}")
        return self


class _Confidence(_Numeric):
    name: str = "confidence"


class _Categorical(_Strict):
    name: str = Field(min_length=1)
    type: Literal["categorical"]
    categories: list[str] = Field(min_length=1)
    proportions: list[float]
    count: int = Field(ge=1)
    missing: int = Field(0, ge=0)

    @model_validator(mode="after")
    def _consistent(self) -> _Categorical:
        if len(set(self.categories)) != len(self.categories):
            raise ValueError("categories must be unique")
        if len(self.proportions) != len(self.categories):
            raise ValueError("proportions must have one entry per category")
        _check_proportions(self.proportions, self.count)
        return self


class _Labelled(_Strict):
    # binary: P(class 1) per row and 0/1 labels; multiclass: a row of k >= 3 class probabilities
    # and the class index
    scores: list[float] | list[list[float]] = Field(min_length=10)
    labels: list[int] = Field(min_length=10)

    @model_validator(mode="after")
    def _same(self) -> _Labelled:
        if len(self.scores) != len(self.labels):
            raise ValueError("scores and labels must have the same length")
        rows = [v if isinstance(v, list) else [v] for v in self.scores]
        k = len(rows[0])
        if (k < 3 and isinstance(self.scores[0], list)) or any(len(r) != k for r in rows):
            raise ValueError("scores must be P(class 1) per row, or rows of the same k >= 3 "
                             "class probabilities")
        if not all(0.0 <= v <= 1.0 for r in rows for v in r):
            raise ValueError("scores must lie in [0, 1]")
        top = 1 if k == 1 else k - 1
        if not all(0 <= v <= top for v in self.labels):
            raise ValueError(f"labels must be class indices 0..{top}")
        return self


class _File(_Strict):
    format: Literal["inferwatch-profile"]
    version: Literal[1]
    bins: int = Field(ge=2)
    rows: int = Field(ge=1)
    features: list[Annotated[_Numeric | _Categorical, Field(discriminator="type")]] = Field(min_length=1)
    confidence: _Confidence | None = None
    labelled: _Labelled | None = None

    @model_validator(mode="after")
    def _unique(self) -> _File:
        names = [f.name for f in self.features]
        if len(set(names)) != len(names):
            raise ValueError("feature names must be unique")
        return self


def _counts(props: list[float], count: int) -> np.ndarray[Any, np.dtype[np.int64]]:
    out: np.ndarray[Any, np.dtype[np.int64]] = np.rint(np.asarray(props) * count).astype(np.int64)
    return out


def _numeric(f: _Numeric) -> NumericProfile:
    return NumericProfile(
        f.name, np.asarray(f.edges, np.float64), _counts(f.proportions, f.count), f.missing, f.min, f.max
    )


def _feature(f: _Numeric | _Categorical) -> FeatureProfile:
    if isinstance(f, _Categorical):
        return CategoricalProfile(f.name, tuple(f.categories), _counts(f.proportions, f.count), f.missing)
    return _numeric(f)


def _where(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def profile_from_json(data: Any, *, source: str = "profile") -> Profile:
    """Validate a decoded profile document; errors name ``source`` and the field."""
    try:
        doc = _File.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(p for p in err["loc"] if p not in ("numeric", "categorical"))
        raise InputError(f"{source}: {_where(loc)}: {err['msg']}") from exc
    conf = _numeric(doc.confidence) if doc.confidence else None
    lab = doc.labelled
    labelled = (np.asarray(lab.scores, np.float64), np.asarray(lab.labels, np.float64)) if lab else None
    return Profile(tuple(_feature(f) for f in doc.features), doc.bins, doc.rows, conf, labelled)


def _numeric_json(f: NumericProfile) -> dict[str, Any]:
    return {
        "name": f.name, "type": "numeric", "edges": f.cuts.tolist(),
        "proportions": f.proportions.tolist(), "count": f.count, "missing": f.missing,
        "min": f.minimum, "max": f.maximum,
    }


def profile_to_json(profile: Profile) -> dict[str, Any]:
    """The JSON document of a profile (see the module docstring)."""
    feats: list[dict[str, Any]] = []
    for f in profile.features:
        if isinstance(f, CategoricalProfile):
            feats.append({
                "name": f.name, "type": "categorical", "categories": list(f.categories),
                "proportions": f.proportions.tolist(), "count": f.count, "missing": f.missing,
            })
        else:
            feats.append(_numeric_json(f))
    conf = None
    if profile.confidence is not None:
        conf = _numeric_json(profile.confidence)
        del conf["type"]
    out = {
        "format": FORMAT, "version": VERSION, "bins": profile.bins, "rows": profile.rows,
        "features": feats, "confidence": conf,
    }
    if profile.labelled is not None:
        scores, labels = profile.labelled
        # multiclass: a row of k probabilities per row
        out["labelled"] = {"scores": scores.tolist(), "labels": [int(v) for v in labels]}
    return out


def dump_profile(profile: Profile, path: str | Path) -> None:
    """Write ``profile`` as JSON to ``path``."""
    Path(path).write_text(json.dumps(profile_to_json(profile), indent=1, allow_nan=False) + "\n")


def load_profile(path: str | Path) -> Profile:
    """Read and validate a profile file (``InputError`` naming the file and field)."""
    p = Path(path)
    try:
        data = json.loads(p.read_text())
    except OSError as exc:
        raise InputError(f"{p}: cannot read: {exc.strerror or exc}") from exc
    except json.JSONDecodeError as exc:
        raise InputError(f"{p}: not JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from exc
    return profile_from_json(data, source=str(p))
