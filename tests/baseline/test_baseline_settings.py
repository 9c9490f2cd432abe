"""The baseline's own settings mirror the config's ``baseline:`` section (baseline cannot import config)."""

from __future__ import annotations

import dataclasses

import pytest

from inferwatch.baseline import BaselineSettings, SeasonalBaseline, SeasonalSettings
from inferwatch.config import BaselineConfig, Config
from inferwatch.server import baseline_settings


def test_defaults_are_the_configs() -> None:
    # rule: one set of defaults: the YAML's and the baseline's agree field by field
    assert baseline_settings(BaselineConfig()) == BaselineSettings()
    assert {f.name for f in dataclasses.fields(BaselineSettings)} == set(BaselineConfig.model_fields)
    for name in ("seasonal", "prophet", "novelty"):
        section = BaselineConfig.model_fields[name].annotation
        assert {f.name for f in dataclasses.fields(getattr(BaselineSettings(), name))} == set(
            section.model_fields)  # type: ignore[union-attr]


def test_a_configured_section_arrives_with_durations_in_seconds() -> None:
    cfg = Config.model_validate({"baseline": {"method": "seasonal", "debounce": 5,
                                     "seasonal": {"slot": "1h", "windows": [6], "min_history": "1d"},
                                     "novelty": {"enabled": True}}})
    s = baseline_settings(cfg.baseline)
    assert (s.debounce, s.seasonal.slot, s.seasonal.windows) == (5, 3600.0, (6,))
    assert s.seasonal.min_history == 86400.0
    assert s.novelty.enabled


def test_the_saved_state_format_is_unchanged() -> None:
    # states saved before the settings left pydantic carry durations as text: they still load
    state = SeasonalBaseline(SeasonalSettings(slot=600.0)).to_state()
    assert state["config"]["slot"] == "10m" and state["config"]["windows"] == [6, 24]
    assert SeasonalBaseline.from_state(state).config == SeasonalSettings(slot=600.0)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"band": 0.0}, "band must be > 0"),
    ({"days": 61}, "days must be >= 1 and <= 60"),
    ({"tail_quantile": 1.5}, "tail_quantile must be > 0 and <= 1"),
    ({"slot": 7000.0}, "must divide one day"),
    ({"windows": (1,)}, "windows must each be 2..1024"),
])
def test_bad_settings_name_the_field(kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SeasonalSettings(**kwargs)  # type: ignore[arg-type]


def test_unknown_keys_are_rejected() -> None:
    with pytest.raises(ValueError, match="unknown BaselineSettings settings: colour"):
        BaselineSettings.from_dict({"colour": "red"})
