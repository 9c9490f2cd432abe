"""The HTTP prober on real loopback targets: blackbox's series and meanings, bounds, canaries."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from tests.probe._targets import targets

from inferwatch._exceptions import ConfigError
from inferwatch.config import parse_config
from inferwatch.model import SimulatedClock, parse_matchers
from inferwatch.server.ingest.probe import Prober, load_golden, run_probe
from inferwatch.store import MemoryStore


def _probes(text: str):
    return parse_config(text).probes


def _value(store: MemoryStore, name: str, **labels: str) -> float:
    matchers = parse_matchers([f'__name__="{name}"', *(f'{k}="{v}"' for k, v in labels.items())])
    hits = store.select(matchers, 0, 1e12)
    assert hits, f"no {name} {labels}"
    return float(hits[-1].v[-1])


@pytest.mark.parametrize(("path", "extra", "ok", "status", "reason"), [
    ("/ok", 'expect: {json_path: "$.label", equals: cat}', True, 200, ""),  # the shape
    ("/ok", 'expect: {json_path: "$.label", equals: dog}', False, 200, "$.label is 'cat', expected 'dog'"),
    ("/500", "", False, 500, "status 500, expected 2xx"),
    ("/500", "expect: {status: [500]}", True, 500, ""),  # an expected status is a success
    ("/redirect", "", True, 200, ""),  # followed: the final answer counts
    ("/redirect", "follow_redirects: false, expect: {status: [302]}", True, 302, ""),
    ("/text", 'expect: {body_regex: "bye"}', False, 200, "body does not match 'bye'"),
    ("/big", "", False, 200, "body larger than max_body_bytes"),  # the body read is capped
])
def test_one_http_probe(path: str, extra: str, ok: bool, status: int, reason: str) -> None:
    with targets() as t:
        spec = _probes(f"probes: [{{name: p, url: '{t.url}{path}', {extra}}}]")[0]
        r = run_probe(spec)
    assert (r.success, r.exchange.status) == (ok, status)
    assert reason in r.reason


def test_a_hung_target_fails_at_the_timeout_not_later() -> None:
    # rule: a probe never runs longer than its timeout
    with targets() as t:
        spec = _probes(f"probes: [{{name: p, url: '{t.url}/hang', timeout: 1s}}]")[0]
        start = time.perf_counter()
        r = run_probe(spec)
        took = time.perf_counter() - start
    assert not r.success and "timed out" in r.reason
    assert took < 20  # the target answers after 30 s; a generous bound on a loaded runner


def test_the_series_carry_blackbox_names_and_the_probe_labels() -> None:
    with targets() as t:
        store, clock = MemoryStore(), SimulatedClock(1000.0)
        specs = _probes(f"probes: [{{name: redir, url: '{t.url}/redirect', labels: {{service: ranker}}}}]")
        Prober(specs, store, clock=clock).run_once()
    base = {"probe": "redir", "service": "ranker", "instance": t.url.split("//")[1]}
    assert _value(store, "probe_success", **base) == 1.0
    assert _value(store, "probe_http_status_code", **base) == 200.0
    assert _value(store, "probe_http_redirects", **base) == 1.0
    assert _value(store, "probe_http_ssl", **base) == 0.0
    for phase in ("resolve", "connect", "tls", "processing", "transfer"):
        assert _value(store, "probe_http_duration_seconds", phase=phase, **base) >= 0.0
    assert _value(store, "inferwatch_probe_runs_total", result="success", **base) == 1.0


def test_tls_expiry_of_a_self_signed_certificate(tmp_path: Path) -> None:
    with targets(tmp_path) as t:
        ok = _probes(f"probes: [{{name: p, url: '{t.url}/ok', tls: {{insecure_skip_verify: true}}}}]")[0]
        ca = f"{{ca_file: '{tmp_path}/cert.pem'}}"
        trusted = _probes(f"probes: [{{name: p, url: '{t.url}/ok', tls: {ca}}}]")[0]
        strict = _probes(f"probes: [{{name: p, url: '{t.url}/ok'}}]")[0]
        r, r2, r3 = run_probe(ok), run_probe(trusted), run_probe(strict)
    assert r.success and r.exchange.ssl and r2.success
    assert r.exchange.cert_expiry is not None
    assert abs(r.exchange.cert_expiry - (time.time() + 30 * 86400)) < 3600
    assert not r3.success and "certificate verify failed" in r3.reason


@pytest.mark.parametrize("stream", [True, False])
def test_a_generative_probe_times_tokens(stream: bool) -> None:
    with targets() as t:
        spec = _probes(f"probes: [{{name: chat, url: '{t.url}/v1/chat/completions', "
                       f"generative: {{model: m, stream: {str(stream).lower()}, expect: '^OK'}}}}]")[0]
        r = run_probe(spec)
        bad = _probes(f"probes: [{{name: chat, url: '{t.url}/v1/chat/completions', "
                      "generative: {model: m, expect: '^NO'}}]")[0]
        r_bad = run_probe(bad)
    assert r.success, r.reason
    assert r.generation is not None and r.generation.text == "OK!" and r.generation.tokens == 3
    assert r.generation.ttft is not None and r.generation.ttft > 0
    assert (r.generation.tpot is not None) == stream  # per token only when tokens come apart
    assert not r_bad.success and "does not match '^NO'" in r_bad.reason


def test_golden_set_counts_right_and_wrong_and_keeps_evidence(tmp_path: Path) -> None:
    golden = tmp_path / "golden.jsonl"
    labels = ["cat", "dog", "bird", "fish", "frog", "horse", "mouse", "owl", "bee", "ant"]
    golden.write_text("".join(f'{{"id": "x{i}", "body": {{"x": {i}}}, "expect": {{"json_path": "$.label", '
                              f'"equals": "{labels[i]}"}}}}\n' for i in range(10)))
    with targets() as t:
        store, clock = MemoryStore(), SimulatedClock(1000.0)
        specs = _probes(f"probes: [{{name: g, url: '{t.url}/predict', method: POST, "
                        "labels: {service: ranker}, "
                        f"golden: {{file: '{golden}', every: 15s, window: 2, threshold: 0.1}}}}]")
        prober = Prober(specs, store, clock=clock)
        prober.run_once()
        clock.advance(15)
        prober.run_once()
        assert _value(store, "inferwatch_probe_canary_wrong_ratio", probe="g") == 0.0
        t.broken = {0, 3, 7}  # the swapped model answers 30 % of the set wrong
        clock.advance(15)
        prober.run_once()
        status = prober.probes()[0]
    assert _value(store, "inferwatch_probe_canary_wrong_ratio", probe="g") == pytest.approx(0.15)
    assert _value(store, "inferwatch_probe_canary_answers_total", probe="g", result="wrong") == 3.0
    assert _value(store, "inferwatch_probe_canary_case_right", probe="g", case="x3") == 0.0
    assert _value(store, "probe_success", probe="g") == 1.0  # wrong answers are not an outage
    assert status.canary_evidence.startswith("2 runs, 3 of 20 answers wrong: case x0: got 'dog', want 'cat'")


@pytest.mark.parametrize(("line", "error"), [
    ('{"body": {}}', 'a case is {"body": ..., "expect": {...}}'),
    ('{"body": {}, "expect": {"equals": 1, "regex": "a"}}', "exactly one of"),
    ('{"body": {}, "expect": {"regex": "("}}', "golden.jsonl:1:"),
    ('{"body": {}, "expect": {"schema": {"type": 5}}}', "golden.jsonl:1:"),
    ("not json", "golden.jsonl:1: not JSON"),
])
def test_a_bad_golden_file_names_file_and_line(tmp_path: Path, line: str, error: str) -> None:
    golden = tmp_path / "golden.jsonl"
    golden.write_text(line + "\n")
    with pytest.raises(ConfigError, match=None) as info:
        load_golden(golden)
    assert error in str(info.value)


@pytest.mark.parametrize(("yaml", "error"), [
    ("probes: [{name: a, url: 'ftp://x'}]", "http:// or https://"),
    ("probes: [{name: a, url: 'http://x', timeout: 1m, interval: 15s}]", "longer than the interval"),
    ("probes: [{name: a, url: 'http://x', expect: {equals: cat}}]", "set json_path"),
    ("probes: [{name: a, url: 'http://x', expect: {json_path: label, equals: cat}}]", "must start with '$'"),
    ("probes: [{name: a, url: 'http://x', expect: {body_regex: '('}}]", "not a valid regular expression"),
    ("probes: [{name: a, url: 'http://x', labels: {probe: b}}]", "set by the prober"),
    ("probes: [{name: a, url: 'http://x'}, {name: a, url: 'http://y'}]", "two probes named 'a'"),
])
def test_bad_probe_config_is_a_clear_error(yaml: str, error: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(yaml)
    assert error in str(info.value)


def test_header_secrets_never_print() -> None:
    spec = _probes("probes: [{name: a, url: 'http://x', headers: {X-Key: hunter2}}]")[0]
    assert "hunter2" not in repr(spec) and "hunter2" not in spec.model_dump_json()
