from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inferwatch import ConfigError
from inferwatch.config import Config, Secret, load_config, parse_config
from inferwatch.model import Dimension


def test_empty_config_gives_design_defaults() -> None:
    cfg = parse_config("")
    assert cfg == Config()
    assert cfg.server.listen.startswith("127.0.0.1:")  # loopback by default
    assert cfg.quality.window == 3600 and cfg.quality.psi_review == 0.25
    assert cfg.sdk.buckets[0] == 0.001 and cfg.sdk.buckets[-1] == 10.0


def test_durations_accept_strings_and_numbers() -> None:
    cfg = parse_config("server: {evaluation_interval: 1m30s}\nstorage: {retention: 86400}")
    assert cfg.server.evaluation_interval == 90 and cfg.storage.retention == 86400


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        # Each error names the file, the field path and the bad value.
        ("server: {evaluation_interval: 5x}", "cfg.yaml: server.evaluation_interval: not a duration: '5x'"),
        ("server: {bogus: 1}", "cfg.yaml: server.bogus: unknown field"),
        ("scrape: {targets: [{job: a, url: u, dimension: gpu}]}", "scrape.targets[0].dimension"),
        ("scrape: {targets: [{url: u}]}", "scrape.targets[0].job: Field required"),
        ("sdk: {buckets: [1, 0.5]}", "sdk.buckets: buckets must be a non-empty, strictly increasing"),
        ("- a\n- b", "the top level must be a mapping"),
        ("server: [unclosed", "cfg.yaml:1:"),
    ],
)
def test_errors_name_file_field_and_value(tmp_path: Path, text: str, needle: str) -> None:
    path = tmp_path / "cfg.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert needle in str(err.value)
    assert str(tmp_path) in str(err.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="config file not found"):
        load_config(tmp_path / "nope.yaml")


def test_env_var_names_the_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("server: {data_dir: /var/lib/iw}")
    monkeypatch.setenv("INFERWATCH_CONFIG", str(path))
    assert load_config().server.data_dir == "/var/lib/iw"


def test_secret_never_prints() -> None:
    cfg = parse_config("server: {api_token: s3cr3t-token}")
    token = cfg.server.api_token
    assert isinstance(token, Secret) and token.reveal() == "s3cr3t-token"
    for shown in (str(cfg), repr(cfg), str(cfg.model_dump(mode="json")), cfg.model_dump_json()):
        assert "s3cr3t" not in shown


def test_config_is_frozen() -> None:
    cfg = Config()
    with pytest.raises(Exception, match="frozen"):
        cfg.server.listen = "0.0.0.0:1"  # type: ignore[misc]


def test_scrape_target_defaults() -> None:
    t = parse_config("scrape: {targets: [{job: a, url: 'http://127.0.0.1:1/metrics'}]}").scrape.targets[0]
    assert t.dimension is Dimension.SERVICE and t.interval is None and t.timeout == 10


_yaml_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                          st.text(max_size=10))
_yaml_values = st.recursive(
    _yaml_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=10,
)
_sections = st.sampled_from(["server", "storage", "scrape", "rules", "alerting", "sdk", "quality",
                             "collect", "baseline", "bogus"])


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(_sections, _yaml_values, max_size=4))
def test_fuzz_loader_only_raises_config_error(data: dict[str, object]) -> None:
    # Whatever the YAML holds, the loader either accepts it or raises ConfigError.
    import yaml

    try:
        parse_config(yaml.safe_dump(data), source="fuzz.yaml")
    except ConfigError as exc:
        assert str(exc).startswith("fuzz.yaml")
