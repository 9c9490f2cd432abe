"""The server's snappy codec: native (cramjam) where installed, byte-compatible with the edge agent's."""

from __future__ import annotations

import random

import pytest

from inferwatch.formats import _snappy
from inferwatch.formats import _snappy_pure as edge_codec


@pytest.mark.parametrize("seed", range(5))
def test_server_blocks_are_read_by_the_pure_python_codec_and_back(seed: int) -> None:
    # rule: remote-write out compresses natively; any snappy reader (Prometheus, VictoriaMetrics,
    # the edge agent's pure-Python one) must read the block, and the server must read the edge's
    rnd = random.Random(seed)
    words = [bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 12))) for _ in range(40)]
    data = b"".join(rnd.choice(words) for _ in range(rnd.randrange(0, 20_000)))
    assert edge_codec.decompress(_snappy.compress(data)) == data
    assert _snappy.decompress(edge_codec.compress(data), max_bytes=len(data)) == data


def test_the_native_codec_is_used_when_installed() -> None:
    import cramjam  # noqa: F401  (a dependency: never skipped)
    assert _snappy.backend() == "cramjam"
    assert _snappy.compress(b"x" * 100_000) != edge_codec.compress(b"x" * 100_000)  # not the fallback
