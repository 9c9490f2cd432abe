"""The quality view in the demo: PSI stays low before the drift phase and rises after it."""

from __future__ import annotations

import io

import pytest

from inferwatch.demo import DemoContext, DemoOptions, Phase, Story, quality_components, run_demo


def test_psi_rises_in_the_drift_phase_and_is_shown() -> None:
    # 60 story s per window at x40: 1.5 real s; drift starts at 120 s (3 real s). The story runs one
    # window past the first drifted one (120-180 s), which a 240 s story left 1.5 real s to close and
    # be seen on a loaded runner.
    story = Story.of([Phase("normal", 0.0), Phase("drift", 120.0, drift=1.0)], end_s=300.0)
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
    run_demo(DemoOptions(duration_s=7.5, speed=40.0, rate=100.0, threads=4, refresh_s=0.5, story=story),
             components, out=out, tty=False)
    before = [psi for s, psi in seen if 0.0 <= s <= 60.0]  # whole windows before the drift
    after = [psi for s, psi in seen if s >= 120.0]         # whole windows inside it
    assert before and after, seen
    # ~150 rows a window: chance PSI stays well under 0.5; drift 1.0 moves clicks_7d by 2 std
    assert max(before) < 0.5 and min(after) > 1.0, seen
    assert "drift (" in out.getvalue() and "PSI" in out.getvalue()


@pytest.mark.slow
def test_the_estimate_drops_before_the_late_labels_confirm_it() -> None:
    # At 120 s the audience narrows to undecided users (accuracy ~0.78 -> ~0.65); labels come 120 s late.
    story = Story.of([Phase("normal", 0.0), Phase("narrow", 120.0, spread=0.4)], end_s=480.0)
    components, _ = quality_components(window_s=60.0, seed=3, label_delay_s=120.0)
    seen: list[tuple[float, float | None, float | None]] = []  # (story s, estimated, realized accuracy)
    key = {"service": "demo", "model": "ctr-logreg", "metric": "accuracy"}

    class Probe:
        def start(self, ctx: DemoContext) -> None: ...
        def stop(self, ctx: DemoContext) -> None: ...

        def refresh(self, ctx: DemoContext, story_t: float) -> list[str]:
            est = ctx.monitor.get_sample_value("inferwatch_model_estimated", {**key, "bound": "estimate"})
            real = ctx.monitor.get_sample_value("inferwatch_model_realized", key)
            seen.append((story_t, est, real))
            return []

    components.parts.append(Probe())
    out = io.StringIO()
    # x24: a 60 s window holds 2.5 real s of requests (~100+ rows even on a loaded runner)
    run_demo(DemoOptions(duration_s=20.0, speed=24.0, rate=100.0, threads=4, refresh_s=0.25, story=story),
             components, out=out, tty=False)
    assert "accuracy: estimated" in out.getvalue()  # each closed window's estimate is printed
    normal_est = [e for t, e, _ in seen if 60.0 < t < 120.0 and e is not None]
    assert normal_est, seen
    level = sum(normal_est) / len(normal_est)
    # the estimate drops well below the normal level before any label of the narrow phase can arrive
    # (those come from 120 + 120 s on) ...
    dropped = [t for t, e, _ in seen if 120.0 < t < 240.0 and e is not None and e < level - 0.06]
    assert dropped, (level, seen)
    # ... and the labels, once they come, confirm it
    late = [r for t, _, r in seen if r is not None and t > 360.0]
    assert late and min(late) < level - 0.04, (level, seen[-5:])
