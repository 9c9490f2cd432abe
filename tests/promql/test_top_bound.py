"""Issue 46: ``topk``/``bottomk`` over many series find each step's k-th value among the values that can be
it (bounded by the k-th best of blocks' best values), not by partitioning every value: the same value
as a full partition, whatever the data (ties, infinities, negative zeros, few rows)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from inferwatch.promql._range_agg import _kth  # the bound is internal: checked against np.partition

_VALUES = st.sampled_from([0.0, -0.0, 1.0, 2.5, -3.0, np.inf, -np.inf, 1e308, 5e-324])


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 3000), st.integers(1, 4), st.integers(1, 40), st.booleans(), st.data())
def test_the_kth_value_is_a_full_partitions(n: int, steps: int, k: int, top: bool,
                                             data: st.DataObject) -> None:
    # rule: for any k <= rows, any column, the k-th largest (top) / smallest value is np.partition's
    k = min(k, n)
    rng = np.random.default_rng(n * 7 + steps)
    x = rng.random((n, steps)) if data.draw(st.booleans()) else rng.choice([0.5, 0.25, 1.0], (n, steps))
    cells = st.tuples(st.integers(0, n - 1), st.integers(0, steps - 1), _VALUES)
    odd = data.draw(st.lists(cells, max_size=20))
    for i, j, v in odd:
        x[i, j] = v
    want = np.partition(x, n - k if top else k - 1, axis=0)[n - k if top else k - 1]
    assert _kth(top, k, x).tolist() == want.tolist()
