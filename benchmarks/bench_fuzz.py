"""An OpenAPI-driven fuzzer for ``inferwatch serve``: bounded, seeded, loopback only.

    python benchmarks/bench_fuzz.py [--cases 2000] [--seed 1] [--url URL]

Without ``--url`` it starts ``inferwatch serve`` on 127.0.0.1 (an ephemeral
port, a temporary data directory) and stops it at the end. It reads
``/api/openapi.json`` and, for each case, picks an operation and sends it
with parameters and bodies generated from the schema and then mutated
(wrong types, missing fields, hostile strings, deep nesting, oversized and
non-JSON bodies, bad or missing tokens). It counts responses by status and
fails on any response >= 500, any traceback in a response, and any
traceback in the server's log. Then the ingest limits (issue 31): remote-write
and OTLP requests with too many labels (31 to 100,000), too long label names
and values (up to 1 MB), and a cardinality ramp of new series past
``max_series_per_metric`` and ``max_series`` (the started server's are 5,000 and
20,000); each must be refused with 400 naming its limit, nothing else.
Prints one JSON summary; exit 1 on failure.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx

import _results

TOKEN = "fuzz-token-0123456789"
NASTY = [
    "", " ", "0", "-1", "1e309", "NaN", "+Inf", "-Inf", "9" * 400, "null", "true", "[]", "{}", "\\", "\"",
    "'", "%00", "\x00", "\u202e", "ü", "😀", "../../etc/passwd", "a" * 5000, "{a=\"b\"}", "${jndi:x}",
    "1h", "-5m", "0s", "2024-01-01T00:00:00Z", "not-a-date", "<script>", "\n\n", "up)", "(((((up",
]
PROMQL = [
    "up", "rate(up[5m])", "sum by (job) (up)", "up == 0", "up > bool 1", "histogram_quantile(0.9, up)",
    '{__name__=~"(\\\\w|\\\\w)*z"}', '{job=~"(?!x).*"}', " + ".join(["up"] * 3000),
    "(" * 400 + "up" + ")" * 400, "count(up) / 0", "up{job=\"a\"}[5m]", "rate(up)", "1/0", "-up",
    "max_over_time(up[1y])", "predict_linear(up[1h])",
]


def _string(rng: random.Random) -> str:
    pick = rng.random()
    if pick < 0.5:
        return rng.choice(NASTY)
    if pick < 0.8:
        return rng.choice(PROMQL)
    return "".join(chr(rng.randrange(1, 0x2FFF)) for _ in range(rng.randrange(1, 40)))


def _deep(rng: random.Random) -> Any:
    depth = rng.choice([10, 40, 100, 600])
    value: Any = "x"
    for _ in range(depth):
        value = [value] if rng.random() < 0.5 else {"k": value}
    return value


def _from_schema(schema: dict[str, Any], rng: random.Random, depth: int = 0) -> Any:
    """A value of the schema's shape, mutated now and then (wrong type, hostile string, deep)."""
    if rng.random() < 0.08:
        return rng.choice([_string(rng), rng.randrange(-(10**12), 10**12), None, True, 1e308, [], {},
                           _deep(rng)])
    kind = schema.get("type")
    if kind == "object":
        props: dict[str, Any] = schema.get("properties", {})
        out = {k: _from_schema(v, rng, depth + 1) for k, v in props.items() if rng.random() < 0.85}
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            for _ in range(rng.randrange(0, 4)):
                out[rng.choice(["alertname", "", "a-b", "job", _string(rng)[:20]])] = _from_schema(extra, rng)
        return out
    if kind == "array":
        return [_from_schema(schema.get("items", {}), rng, depth + 1) for _ in range(rng.randrange(0, 4))]
    if kind == "boolean":
        return rng.random() < 0.5
    if "enum" in schema:
        return rng.choice(schema["enum"])
    if schema.get("format") == "date-time":
        return rng.choice(["2030-01-01T00:00:00Z", "2020-01-01T00:00:00+02:00", "yesterday", "9999-99-99"])
    return _string(rng)


def _param(spec: dict[str, Any], rng: random.Random) -> str:
    example = spec.get("schema", {}).get("example")
    if spec["name"] == "query":
        return rng.choice(PROMQL) if rng.random() < 0.7 else _string(rng)
    if example is not None and rng.random() < 0.5:
        if rng.random() < 0.5 or not str(example).isdigit():
            return str(example)
        return str(float(example) + rng.uniform(-1e6, 1e6))
    return _string(rng)


def _request(doc: dict[str, Any], rng: random.Random) -> tuple[str, str, dict[str, Any]]:
    path = rng.choice(sorted(doc["paths"]))
    method = rng.choice(sorted(doc["paths"][path]))
    op = doc["paths"][path][method]
    params: dict[str, str] = {}
    url = path
    for spec in op.get("parameters", []):
        if spec["in"] == "path":
            url = url.replace("{" + spec["name"] + "}", quote(_string(rng), safe="") or "x")
        elif (spec.get("required") or rng.random() < 0.7) and rng.random() < 0.9:
            params[spec["name"]] = _param(spec, rng)
    if rng.random() < 0.1:
        params[_string(rng)[:30] or "x"] = _string(rng)
    headers = {}
    auth = rng.random()
    if auth < 0.7:
        headers["Authorization"] = f"Bearer {TOKEN}"
    elif auth < 0.85:
        headers["Authorization"] = rng.choice(["Bearer x y", "Bearer wrong", "Basic Zm9vOmJhcg==",
                                               quote(_string(rng))])
    kw: dict[str, Any] = {"params": params, "headers": headers}
    body = op.get("requestBody")
    if body is not None or rng.random() < 0.05:
        schema = body["content"]["application/json"]["schema"] if body else {"type": "object"}
        shape = rng.random()
        if shape < 0.75:
            kw["content"] = json.dumps(_from_schema(schema, rng)).encode()
        elif shape < 0.85:
            kw["content"] = json.dumps(_deep(rng)).encode()
        elif shape < 0.92:
            kw["content"] = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 300)))
        else:
            kw["content"] = b'{"alerts": [{"labels": {"a": "' + b"x" * (2 << 20) + b'"}}]}'
        headers["Content-Type"] = rng.choice(["application/json", "text/plain",
                                              "application/x-www-form-urlencoded"])
    return method.upper(), url, kw


def _limit_cases(rng: random.Random) -> list[tuple[str, str, bytes, dict[str, str], str]]:
    """(case, path, body, headers, the limit the answer must name): label count, lengths, on two ways in."""
    from inferwatch.edge import REMOTE_WRITE_HEADERS, encode_write_request
    from inferwatch.model import Labels, Sample

    now = time.time()
    rw = {**REMOTE_WRITE_HEADERS, "Authorization": f"Bearer {TOKEN}"}
    out = []
    for n in (31, 1000, 100_000):
        ls = Labels({"__name__": "fuzz_wide", **{f"l{i}": "x" for i in range(n - 1)}})
        out.append((f"remote write, {n} labels", "/api/v1/write",
                    encode_write_request([Sample(ls, now, 1.0)]), rw, "label_limit"))
    for size in (1025, 10_000):
        ls = Labels({"__name__": "fuzz_long", "n" * size: "x"})
        out.append((f"remote write, a {size}-character label name", "/api/v1/write",
                    encode_write_request([Sample(ls, now, 1.0)]), rw, "label_name_length_limit"))
    for size in (2049, 1_000_000):
        ls = Labels.of("fuzz_long", v="".join(rng.choice("abcdef") for _ in range(size)))
        out.append((f"remote write, a {size}-character label value", "/api/v1/write",
                    encode_write_request([Sample(ls, now, 1.0)]), rw, "label_value_length_limit"))
    for n in (31, 5000):
        attrs = [{"key": f"a{i}", "value": {"stringValue": "x"}} for i in range(n)]
        point = {"timeUnixNano": str(time.time_ns()), "asDouble": 1.0, "attributes": attrs}
        doc = {"resourceMetrics": [{"scopeMetrics": [{"metrics": [
            {"name": "fuzz_otlp", "gauge": {"dataPoints": [point]}}]}]}]}
        out.append((f"OTLP, {n} attributes", "/v1/metrics", json.dumps(doc).encode(),
                    {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}, "label_limit"))
    return out


def limits(url: str, seed: int) -> dict[str, Any]:
    """The ingest-limit cases and the cardinality ramp; what each got, and the failures."""
    from inferwatch.edge import REMOTE_WRITE_HEADERS, encode_write_request
    from inferwatch.model import Labels, Sample

    rng = random.Random(seed)
    got: dict[str, str] = {}
    failures: list[str] = []
    with httpx.Client(base_url=url, timeout=120) as client:
        for case, path, body, headers, limit in _limit_cases(rng):
            r = client.post(path, content=body, headers=headers)
            got[case] = f"{r.status_code} {r.text[:90]}"
            if r.status_code != 400 or limit not in r.text:
                failures.append(f"{case}: {got[case]}")
        # cardinality: 1,000 new series a request, one metric, then many metrics, until refused
        rw = {**REMOTE_WRITE_HEADERS, "Authorization": f"Bearer {TOKEN}"}
        for ramp, limit, name in (("one metric", "max_series_per_metric", lambda r: "fuzz_card"),
                                  ("many metrics", "max_series", lambda r: f"fuzz_card_{r}")):
            accepted, answer = 0, None
            for r in range(60):  # bounded: the limits are 5,000 and 20,000 series
                batch = [Sample(Labels.of(name(r), id=f"{r}-{i}"), time.time(), 1.0) for i in range(1000)]
                answer = client.post("/api/v1/write", content=encode_write_request(batch), headers=rw)
                if answer.status_code != 204:
                    break
                accepted += 1000
            assert answer is not None
            got[f"cardinality, {ramp}"] = (f"{accepted} series taken, then {answer.status_code} "
                                           f"{answer.text[:90]}")
            if answer.status_code != 400 or limit not in answer.text:
                failures.append(f"cardinality, {ramp}: {got[f'cardinality, {ramp}']}")
    return {"cases": got, "failures": failures}


def _traceback(text: str) -> bool:
    return "Traceback (most recent call last)" in text or bool(re.search(r'File "[^"]+", line \d+', text))


def fuzz(url: str, cases: int, seed: int) -> dict[str, Any]:
    """Send ``cases`` generated requests to the server at ``url``; return the summary."""
    rng = random.Random(seed)
    statuses: Counter[int] = Counter()
    failures: list[dict[str, Any]] = []
    t0 = time.monotonic()
    with httpx.Client(base_url=url, timeout=60) as client:
        doc = client.get("/api/openapi.json").json()
        for i in range(cases):
            method, path, kw = _request(doc, rng)
            try:
                resp = client.request(method, path, **kw)
            except (httpx.InvalidURL, httpx.LocalProtocolError, UnicodeEncodeError):
                statuses[-1] += 1  # the client refused to send it: not the server's business
                continue
            except httpx.HTTPError as exc:  # a closed connection is not a crash, but count it
                statuses[0] += 1
                failures.append({"case": i, "method": method, "path": path, "error": repr(exc)[:200]})
                continue
            statuses[resp.status_code] += 1
            if (resp.status_code >= 500 and resp.status_code != 503) or _traceback(resp.text):
                failures.append({"case": i, "method": method, "path": path, "status": resp.status_code,
                                 "body": resp.text[:300]})
    return {"cases": cases, "seed": seed, "seconds": round(time.monotonic() - t0, 1),
            "operations": sum(len(v) for v in doc["paths"].values()),
            "statuses": dict(sorted(statuses.items())), "failures": failures[:20],
            "failed": len(failures)}


def _serve(tmp: Path) -> tuple[subprocess.Popen[str], str]:
    cfg = tmp / "inferwatch.yml"
    cfg.write_text(f"server: {{data_dir: '{tmp / 'data'}', api_token: {TOKEN}, query: {{timeout: 10s}}, "
                   "limits: {max_series: 20000, max_series_per_metric: 5000}}\n"
                   "scrape: {targets: [{job: down, url: 'http://127.0.0.1:1/metrics', interval: 5s, "
                   "timeout: 1s}]}\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("INFERWATCH_")}
    proc = subprocess.Popen([sys.executable, "-m", "inferwatch", "serve", "--config", str(cfg),
                             "--listen", "127.0.0.1:0"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, env=env)
    assert proc.stderr is not None
    for line in proc.stderr:
        m = re.search(r"listening on (http://127\.0\.0\.1:\d+) ", line)
        if m:
            return proc, m.group(1)
    raise RuntimeError("inferwatch serve did not start")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--url", help="fuzz a running server instead of starting one")
    args = ap.parse_args(argv)
    if args.url:
        summary = fuzz(args.url, args.cases, args.seed)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            proc, url = _serve(Path(tmp))
            try:
                summary = fuzz(url, args.cases, args.seed)
                summary["limits"] = limits(url, args.seed)
                summary["failed"] += len(summary["limits"]["failures"])
            finally:
                proc.send_signal(signal.SIGTERM)
                _, err = proc.communicate(timeout=60)
            summary["server_tracebacks"] = err.count("Traceback")
            summary["server_log_lines"] = len(err.splitlines())
    print(json.dumps(summary, indent=2))
    fives = sum(n for code, n in summary["statuses"].items() if int(code) >= 500 and int(code) != 503)
    _results.record("Hostile input, faults and load",
                    f"OpenAPI-driven fuzzer, {args.cases:,} cases: answers ≥ 500, tracebacks",
                    f"{fives}, {summary.get('server_tracebacks', 0)}", "–", None)
    return 1 if summary["failed"] or summary.get("server_tracebacks") else 0


if __name__ == "__main__":
    sys.exit(main())
