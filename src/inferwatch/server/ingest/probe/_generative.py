"""Generative-API probes: an OpenAI-compatible ``chat/completions`` or ``completions`` request,
streamed (server-sent events) or not, timed as the SDK times generations: time to first token,
time per output token after it, tokens, and the text matched against ``expect``."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from inferwatch.config import GenerativeSpec
from inferwatch.server.ingest.probe._check import shown

__all__ = ["Generation", "StreamReader", "generation_body", "read_generation"]


def generation_body(spec: GenerativeSpec) -> bytes:
    """The request's JSON body."""
    body: dict[str, Any] = {"model": spec.model, "max_tokens": spec.max_tokens, "stream": spec.stream}
    if spec.api == "chat":
        body["messages"] = [{"role": "user", "content": spec.prompt}]
    else:
        body["prompt"] = spec.prompt
    if spec.stream:
        body["stream_options"] = {"include_usage": True}
    return json.dumps(body).encode()


def _piece(choice: dict[str, Any]) -> str:
    delta = choice.get("delta") or choice.get("message") or {}
    text = delta.get("content") if isinstance(delta, dict) else None
    if text is None:
        text = choice.get("text")
    return text if isinstance(text, str) else ""


@dataclass
class Generation:
    """What the answer held and how fast it came."""

    text: str = ""
    tokens: int = 0
    ttft: float | None = None
    tpot: float | None = None
    error: str = ""


@dataclass
class StreamReader:
    """The exchange's chunk callback for a streamed answer: splits server-sent events, times tokens."""

    start: float
    buffer: bytes = b""
    pieces: list[str] = field(default_factory=list)
    first: float | None = None
    last: float | None = None
    usage_tokens: int | None = None

    def __call__(self, chunk: bytes, now: float) -> None:
        self.buffer += chunk
        while b"\n" in self.buffer:
            line, self.buffer = self.buffer.split(b"\n", 1)
            self._line(line.strip(), now)

    def _line(self, line: bytes, now: float) -> None:
        if not line.startswith(b"data:"):
            return
        data = line[5:].strip()
        if data == b"[DONE]":
            return
        try:
            event = json.loads(data)
        except ValueError:
            return
        usage = event.get("usage") if isinstance(event, dict) else None
        if isinstance(usage, dict) and isinstance(usage.get("completion_tokens"), int):
            self.usage_tokens = usage["completion_tokens"]
        for choice in event.get("choices") or [] if isinstance(event, dict) else []:
            text = _piece(choice) if isinstance(choice, dict) else ""
            if text:
                self.pieces.append(text)
                self.first = now if self.first is None else self.first
                self.last = now


def _timed(gen: Generation, start: float, first: float | None, last: float | None) -> None:
    if first is not None:
        gen.ttft = first - start
        if last is not None and gen.tokens > 1:
            gen.tpot = (last - first) / (gen.tokens - 1)


def read_generation(spec: GenerativeSpec, body: bytes, reader: StreamReader | None,
                    total: float = 0.0) -> Generation:
    """The generation in ``body`` (not streamed) or seen by ``reader`` (streamed), checked against
    ``expect``."""
    gen = Generation()
    if reader is not None:
        gen.text = "".join(reader.pieces)
        gen.tokens = reader.usage_tokens if reader.usage_tokens is not None else len(reader.pieces)
        _timed(gen, reader.start, reader.first, reader.last)
    else:
        try:
            doc = json.loads(body)
            choices = doc.get("choices") or []
            gen.text = "".join(_piece(c) for c in choices if isinstance(c, dict))
            usage = doc.get("usage") or {}
            gen.tokens = int(usage.get("completion_tokens") or 0)
        except (ValueError, AttributeError, TypeError):
            text = shown(body.decode("utf-8", "replace"))
            gen.error = f"answer is not an OpenAI-compatible JSON body: {text!r}"
            return gen
        gen.ttft = total  # not streamed: the first token comes with the whole answer
    if not gen.text:
        gen.error = "the answer holds no generated text"
    elif spec.expect is not None and not re.search(spec.expect, gen.text):
        gen.error = f"generated {shown(gen.text, 60)!r}, does not match {spec.expect!r}"
    return gen
