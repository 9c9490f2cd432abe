"""A recorded device as OpenMetrics text with timestamps: what ``edge simulate --openmetrics`` replays.

The format ``promtool tsdb create-blocks-from openmetrics`` reads: ``# TYPE``
lines, one sample per line with its timestamp in seconds, ``# EOF`` at the
end; a ``.gz`` file is read through gzip. Counters (``# TYPE x counter``,
samples ``x_total``), histograms and summaries keep their types; ``unknown``,
``info``, ``stateset`` and ``gaugehistogram`` are replayed as gauges.

>>> import tempfile, pathlib
>>> p = pathlib.Path(tempfile.mkdtemp()) / "d.om"
>>> _ = p.write_text('# TYPE req counter\\nreq_total{code="200"} 3 1700000000\\n# EOF\\n')
>>> samples, kinds = read_openmetrics(p)
>>> [(str(s.labels), s.t, s.v) for s in samples], kinds["req_total"].value
([('req_total{code="200"}', 1700000000.0, 3.0)], 'counter')
"""

from __future__ import annotations

import gzip
import io
from pathlib import Path

from inferwatch._exceptions import InputError
from inferwatch.formats._exposition import parse_line
from inferwatch.model import MetricKind, Sample

__all__ = ["read_openmetrics"]

_KINDS = {"counter": MetricKind.COUNTER, "gauge": MetricKind.GAUGE, "histogram": MetricKind.HISTOGRAM,
          "summary": MetricKind.SUMMARY}
_AS_GAUGE = ("unknown", "untyped", "info", "stateset", "gaugehistogram")


def read_openmetrics(path: Path) -> tuple[list[Sample], dict[str, MetricKind]]:
    """Every sample of the file (in file order) and the kind of each family; errors name the line."""
    try:
        raw = path.read_bytes()
        text = gzip.decompress(raw).decode() if raw[:2] == b"\x1f\x8b" else raw.decode()
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({getattr(exc, 'strerror', None) or exc})") from None
    except (UnicodeDecodeError, EOFError, gzip.BadGzipFile) as exc:
        raise InputError(f"{path}: not OpenMetrics text ({exc})") from None
    samples: list[Sample] = []
    kinds: dict[str, MetricKind] = {}
    eof = False
    for lineno, line in enumerate(io.StringIO(text), 1):
        line = line.strip()
        if not line:
            continue
        if eof:
            raise InputError(f"{path}:{lineno}: text after # EOF")
        if line.startswith("#"):
            parts = line.split()
            if parts == ["#", "EOF"]:
                eof = True
            elif len(parts) >= 4 and parts[1] == "TYPE":
                kind = parts[3]
                if kind not in _KINDS and kind not in _AS_GAUGE:
                    raise InputError(f"{path}:{lineno}: unknown type {kind!r:.40}")
                kinds[parts[2]] = _KINDS.get(kind, MetricKind.GAUGE)
                if kind == "counter":
                    kinds[parts[2] + "_total"] = MetricKind.COUNTER
            continue
        line = line.split(" # ", 1)[0]  # an exemplar: not replayed
        try:
            s, stamped = parse_line(line, lineno, now=0.0, seconds=True)
        except InputError as exc:
            raise InputError(f"{path}: {exc}") from None
        if not stamped:
            raise InputError(f"{path}:{lineno}: a sample without a timestamp (replay needs them)")
        samples.append(s)
    if not samples:
        raise InputError(f"{path}: no samples")
    return samples, kinds
