"""What the edge spool keeps on disk: a recorded device through the deadband, appended a round at a time.

    python benchmarks/bench_spool.py [TRACE.om.gz ...]

For each trace (default: ``benchmarks/traces/device-15s-25m.om.gz``) the real deadband's output
is appended to a real spool one collection round at a time, as the agent appends it, and every
point to a second spool; printed: the samples each holds and the bytes the byte cap counts
(compressed segments plus SQLite's row overhead), per sample. A row a sample took 40 bytes before
the segments.
"""

from __future__ import annotations

import itertools
import sys
import tempfile
from pathlib import Path

import _results
from inferwatch.edge import Spool
from inferwatch.edge._deadband import Deadband, DeadbandSettings
from inferwatch.formats import read_openmetrics

DEFAULT = Path(__file__).parent / "traces" / "device-15s-25m.om.gz"


def main(argv: list[str]) -> int:
    for path in [Path(a) for a in argv] or [DEFAULT]:
        samples, kinds = read_openmetrics(path)
        db = Deadband(DeadbandSettings(heartbeat_max=1800.0), kinds=dict(kinds))
        with tempfile.TemporaryDirectory(prefix="iw-spool-") as tmp:
            kept, every = Spool(Path(tmp) / "kept.sqlite"), Spool(Path(tmp) / "every.sqlite")
            for t, group in itertools.groupby(sorted(samples, key=lambda s: s.t), key=lambda s: s.t):
                points = list(group)
                kept.append(db.offer_all(points), now=t)
                every.append(points, now=t)
            k, e = kept.stored_bytes(), every.stored_bytes()
            print(f"{path.name}: the deadband's output, {kept.backlog()} samples in {k} B "
                  f"({k / kept.backlog():.2f} B a sample); every point, {every.backlog()} "
                  f"samples in {e} B ({e / every.backlog():.2f} B a sample)")
            if path == DEFAULT:
                per = k / kept.backlog()
                _results.record("Edge agent", "Spool on disk, a real trace's deadband output appended a "
                                "round at a time (compressed segments, issue #52)",
                                f"{per:.1f} B a sample ({kept.backlog():,} samples in {k:,} B; "
                                f"every point {e / every.backlog():.1f} B)",
                                "the spool before: a row a sample, 40 B", f"{per / 40:.2f}")
            kept.close()
            every.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
