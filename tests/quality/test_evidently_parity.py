"""Same data and same bins as Evidently 0.7.23: same PSI, JS, Wasserstein and KS p-value.

The reference values were computed by ``reference/make_evidently_reference.py``
(in a separate venv with Evidently) and stored next to it. Evidently's PSI bins
are equal-width over reference + current combined (``"sturges"``), so the
interior edges are passed to :func:`psi` as ``cuts``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from inferwatch.quality import js_distance, ks_2samp, psi, psi_categorical, wasserstein
from inferwatch.quality.profile._binning import bin_counts

REF = json.loads((Path(__file__).parent / "reference" / "evidently_reference.json").read_text())


@pytest.mark.parametrize("name", sorted(REF["numeric"]))
def test_numeric_statistics_equal_evidentlys(name: str) -> None:
    case = REF["numeric"][name]
    ref, cur = np.array(case["reference"]), np.array(case["current"])
    cuts = np.array(case["edges"])[1:-1]
    assert psi(ref, cur, cuts=cuts) == pytest.approx(case["psi"], rel=1e-9)
    assert js_distance(bin_counts(ref, cuts), bin_counts(cur, cuts)) == pytest.approx(case["js"], rel=1e-9)
    norm = max(float(np.std(ref)), 0.001)  # Evidently norms Wasserstein by the reference's std
    assert wasserstein(ref, cur) / norm == pytest.approx(case["wasserstein_norm"], rel=1e-9)
    assert ks_2samp(ref, cur).p_value == pytest.approx(case["ks_p_value"], rel=1e-6)


def test_categorical_psi_with_one_unseen_category_equals_evidentlys() -> None:
    # with a single new category Evidently's per-category bucket is our "unseen" bucket
    case = REF["categorical"]["with_unseen"]
    assert psi_categorical(case["reference"], case["current"]) == pytest.approx(case["psi"], rel=1e-9)
