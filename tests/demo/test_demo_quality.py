"""The quality view in the demo: PSI stays low before the drift phase and rises after it."""

from __future__ import annotations

import io

from inferwatch.demo import DemoContext, DemoOptions, Phase, Story, quality_components, run_demo


def test_psi_rises_in_the_drift_phase_and_is_shown() -> None:
    # 60 story s per window at x40: 1.5 real s; drift starts at 120 s (3 real s).
    story = Story.of([Phase("normal", 0.0), Phase("drift", 120.0, drift=1.0)], end_s=240.0)
    components, view = quality_components(window_s=60.0)
    seen: list[tuple[float, float]] = []  # (window start in story seconds, largest PSI)

    class Probe:
        def start(self, ctx: DemoContext) -> None: ...
        def stop(self, ctx: DemoContext) -> None: ...

        def refresh(self, ctx: DemoContext, story_t: float) -> list[str]:
            last = view.drift.last
            if last is not None and last.features:
                seen.append((last.start - ctx.story_start, max(f.psi for f in last.features.values())))
            return []

    components.parts.append(Probe())
    out = io.StringIO()
    run_demo(DemoOptions(duration_s=6.0, speed=40.0, rate=100.0, threads=4, refresh_s=0.5, story=story),
             components, out=out, tty=False)
    before = [psi for s, psi in seen if 0.0 <= s <= 60.0]  # whole windows before the drift
    after = [psi for s, psi in seen if s >= 120.0]         # whole windows inside it
    assert before and after, seen
    # ~150 rows a window: chance PSI stays well under 0.5; drift 1.0 moves clicks_7d by 2 std
    assert max(before) < 0.5 and min(after) > 1.0, seen
    assert "drift (" in out.getvalue() and "PSI" in out.getvalue()
