"""The demo's terminal view: a refreshing table on a TTY, one plain line per refresh otherwise."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TextIO

from inferwatch.demo._live import LiveStats
from inferwatch.demo._story import Phase

__all__ = ["Display", "format_clock"]

_CLEAR = "\x1b[H\x1b[2J"


def format_clock(seconds: float) -> str:
    """Story time as ``MM:SS``."""
    s = max(int(seconds), 0)
    return f"{s // 60:02d}:{s % 60:02d}"


def _pct(x: float) -> str:
    return "   -" if math.isnan(x) else f"{100 * x:5.1f}%"


def _secs(x: float) -> str:
    return "    -" if math.isnan(x) else (f"{x * 1000:4.0f} ms" if x < 1 else f"{x:5.2f} s")


class Display:
    """Writes the live view to ``out``; ``tty`` picks the refreshing table."""

    def __init__(self, out: TextIO, *, tty: bool, header: str) -> None:
        self._out, self.tty, self._header = out, tty, header

    def show(
        self, story_t: float, end_s: float, phase: Phase, stats: LiveStats, degraded: bool,
        extra: Sequence[str] = (),
    ) -> None:
        """One refresh."""
        if self.tty:
            self._table(story_t, end_s, phase, stats, degraded, extra)
        else:
            self._line(story_t, phase, stats, degraded, extra)
        self._out.flush()

    def _table(
        self, t: float, end_s: float, phase: Phase, s: LiveStats, degraded: bool, extra: Sequence[str],
    ) -> None:
        lines = [
            self._header,
            f"story time {format_clock(t)} / {format_clock(end_s)}   phase: {phase.name} ({phase.note})",
            "",
            f"  {'QPS':>7}  {'P99':>8}  {'errors':>7}  {'503s':>7}  {'degraded':>8}",
            f"  {s.qps:7.1f}  {_secs(s.p99_s):>8}  {_pct(s.error_ratio):>7}  "
            f"{_pct(s.unavailable_ratio):>7}  {'yes' if degraded else 'no':>8}",
            "",
            *extra,
        ]
        self._out.write(_CLEAR + "\n".join(lines) + "\n")

    def _line(self, t: float, phase: Phase, s: LiveStats, degraded: bool, extra: Sequence[str]) -> None:
        self._out.write(
            f"[{format_clock(t)}] {phase.name:<8} qps={s.qps:6.1f} p99={_secs(s.p99_s).strip():>8} "
            f"errors={_pct(s.error_ratio).strip():>6} 503s={_pct(s.unavailable_ratio).strip():>6}"
            f"{' degraded' if degraded else ''}\n",
        )
        for line in extra:
            self._out.write(f"         {line}\n")

    def message(self, text: str) -> None:
        """A line outside the table (start-up, phase changes in plain mode, the summary)."""
        self._out.write(text + "\n")
        self._out.flush()
