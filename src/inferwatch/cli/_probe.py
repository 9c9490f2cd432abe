"""``inferwatch probe URL``: one probe now, printed as a table (phases, status, answer).

The probe is the config's shape from flags (``--method``, ``--header``, ``--body``,
``--expect-status``, ``--json-path`` with ``--equals`` or ``--regex``, ``--body-regex``,
``--insecure``, ``--ca-file``, ``--no-follow``, ``--generative``), or a probe of the
config by name (``--name``). Exit 0 when it succeeded, 1 when it failed.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from inferwatch._exceptions import InputError
from inferwatch.cli._common import add_config_arg, print_json

__all__ = ["add_parser"]


def add_parser(sub: Any) -> None:
    """Register ``probe``."""
    p: argparse.ArgumentParser = sub.add_parser(
        "probe", help="probe an endpoint once: phases, status, answer",
        description="Send one probe as serve's prober does (blackbox_exporter's phases: resolve, "
        "connect, tls, processing, transfer) and print what came back. Exit 1 when it failed.")
    p.add_argument("url", nargs="?", metavar="URL", help="the endpoint (or --name for a configured probe)")
    p.add_argument("--name", help="run the config's probe of this name (its golden set: one run)")
    add_config_arg(p)
    p.add_argument("--method", default=None, help="HTTP method (default GET; POST with --body)")
    p.add_argument("--header", action="append", default=[], metavar="NAME:VALUE", help="a header (repeat)")
    p.add_argument("--body", help="the request body (JSON or text)")
    p.add_argument("--timeout", default="5s", help="the whole probe (default 5s)")
    p.add_argument("--expect-status", action="append", type=int, default=[], metavar="CODE",
                   help="an accepted status (repeat; default any 2xx)")
    p.add_argument("--body-regex", help="the body must match this")
    p.add_argument("--json-path", help="a value in the JSON answer, such as $.label")
    p.add_argument("--equals", help="the value at --json-path must equal this (JSON, else text)")
    p.add_argument("--regex", help="the value at --json-path must match this")
    p.add_argument("--insecure", action="store_true", help="do not verify the TLS certificate")
    p.add_argument("--ca-file", help="PEM file of the CA that signs the server's certificate")
    p.add_argument("--no-follow", action="store_true", help="do not follow redirects")
    p.add_argument("--generative", choices=("chat", "completions"),
                   help="an OpenAI-compatible request: chat/completions or completions")
    p.add_argument("--model", default="default", help="--generative: the model")
    p.add_argument("--prompt", help="--generative: the prompt")
    p.add_argument("--no-stream", action="store_true", help="--generative: ask for the whole answer at once")
    p.add_argument("--json", action="store_true", help="print JSON instead of the table")
    p.set_defaults(func=_run)


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _spec_from_flags(args: argparse.Namespace) -> dict[str, Any]:
    headers = {}
    for h in args.header:
        name, sep, value = h.partition(":")
        if not sep or not name.strip():
            raise InputError(f"--header {h!r}: write NAME:VALUE")
        headers[name.strip()] = value.strip()
    spec: dict[str, Any] = {"name": "cli", "url": args.url, "headers": headers, "timeout": args.timeout,
                            "interval": args.timeout, "follow_redirects": not args.no_follow,
                            "tls": {"insecure_skip_verify": args.insecure, "ca_file": args.ca_file}}
    if args.method or args.body is not None:
        spec["method"] = (args.method or "POST").upper()
    if args.body is not None:
        spec["body"] = args.body
    expect: dict[str, Any] = {"status": args.expect_status, "body_regex": args.body_regex,
                              "json_path": args.json_path, "regex": args.regex}
    if args.equals is not None:
        expect["equals"] = _json_or_text(args.equals)
    spec["expect"] = {k: v for k, v in expect.items() if v not in (None, [])}
    if args.generative:
        gen = {"api": args.generative, "model": args.model, "stream": not args.no_stream}
        spec["generative"] = {**gen, **({"prompt": args.prompt} if args.prompt else {})}
    return spec


def _probe(args: argparse.Namespace) -> Any:
    from pydantic import ValidationError

    from inferwatch.config import ProbeSpec, load_config

    if args.name:
        found = [p for p in load_config(args.config).probes if p.name == args.name]
        if not found:
            raise InputError(f"--name {args.name!r}: no probe of that name in the config")
        return found[0]
    if not args.url:
        raise InputError("give a URL, or --name NAME for a probe of the config")
    try:
        return ProbeSpec.model_validate(_spec_from_flags(args))
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in err["loc"])
        raise InputError(f"{where or 'probe'}: {err['msg']}") from None


def _row(name: str, value: str) -> str:
    return f"{name:<12} {value}"


def _table(spec: Any, r: Any, phases: tuple[str, ...]) -> list[str]:
    ex = r.exchange
    lines = [_row("probe", f"{spec.name}  {spec.url}"),
             _row("result", "success" if r.success else f"FAILED: {r.reason}"),
             _row("status", str(ex.status or "-")), "", _row("phase", "seconds")]
    lines += [_row(p, f"{ex.phases[p]:.4f}") for p in phases]
    lines += [_row("total", f"{r.duration:.4f}"), ""]
    extra = f"redirects {ex.redirects}  tls {'yes' if ex.ssl else 'no'}  body {len(ex.body)} bytes"
    if ex.cert_expiry is not None:
        import datetime

        expiry = datetime.datetime.fromtimestamp(ex.cert_expiry, datetime.UTC)
        extra += f"  certificate expires {expiry:%Y-%m-%d}"
    lines.append(_row("answer", r.answer or "-"))
    lines.append(_row("", extra))
    gen = r.generation
    if gen is not None:
        tpot = "-" if gen.tpot is None else f"{gen.tpot:.4f}"
        lines.append(_row("generation", f"ttft {gen.ttft or 0:.4f}s  per token {tpot}s  tokens {gen.tokens}"))
    for case, why in r.answers:
        lines.append(_row(f"case {case}", "right" if not why else f"WRONG: {why}"))
    return lines


def _run(args: argparse.Namespace) -> int:
    from inferwatch.server import PHASES, Rotation, load_golden, run_probe

    spec = _probe(args)
    rotation = None
    if spec.golden is not None:
        rotation = Rotation(load_golden(spec.golden.file), spec.golden.cases_per_run)
    r = run_probe(spec, rotation)
    if args.json:
        print_json({"probe": spec.name, "url": spec.url, "success": r.success, "reason": r.reason,
                    "status": r.exchange.status, "phases": r.exchange.phases, "duration": r.duration,
                    "redirects": r.exchange.redirects, "answer": r.answer, "answers": r.answers})
    else:
        print("\n".join(_table(spec, r, PHASES)))
    return 0 if r.success else 1
