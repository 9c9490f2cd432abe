"""The spool's segment codec: every sample round-trips bit for bit, in order; damage is an InputError."""

from __future__ import annotations

import math
import random
import struct

import pytest

from inferwatch._exceptions import InputError
from inferwatch.formats import decode_segment, encode_segment


def _bits(xs: list[float]) -> list[bytes]:
    return [struct.pack(">d", x) for x in xs]


@pytest.mark.parametrize("seed", range(20))
def test_any_segment_round_trips_exactly(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(0, 300)
    ids = [rng.randint(1, 40) for _ in range(n)]
    whole_ms = rng.random() < 0.5  # the times' two modes: whole milliseconds, any float
    ts = [round(1.7e9 + 15 * (k // 40) + rng.random(), 3) if whole_ms else rng.uniform(-1e12, 1e12)
          for k in range(n)]
    special = [math.nan, -0.0, math.inf, -math.inf, 0.0, 5e-324, 1.7976931348623157e308]
    plain = [rng.random(), float(rng.randint(0, 10**12))]
    vs = [rng.choice(special) if rng.random() < 0.2 else rng.choice(plain) for _ in range(n)]
    got_ids, got_ts, got_vs = decode_segment(encode_segment(ids, ts, vs), 1000)
    assert (got_ids, _bits(got_ts), _bits(got_vs)) == (ids, _bits(ts), _bits(vs))


@pytest.mark.parametrize("seed", range(20))
def test_a_damaged_segment_is_an_input_error(seed: int) -> None:
    # rule: a flipped byte or a cut never passes as data and never raises anything else
    rng = random.Random(seed)
    ks = range(50)
    blob = bytearray(encode_segment(list(ks), [1000.0 + k for k in ks], [k * 1.5 for k in ks]))
    if seed % 2:
        blob[rng.randrange(4, len(blob))] ^= 1 << rng.randrange(8)
    else:
        del blob[rng.randrange(5, len(blob)):]
    with pytest.raises(InputError):
        decode_segment(bytes(blob), 1000)


def test_a_segment_over_the_bound_is_refused() -> None:
    with pytest.raises(InputError, match="more than 10"):
        decode_segment(encode_segment([1] * 11, [1.0] * 11, [0.0] * 11), 10)
