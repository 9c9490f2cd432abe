"""The one Prometheus text / OpenMetrics parser: a scrape to samples, with a per-target series cache.

Like Prometheus's scrape cache, each line's series text (``name{labels}``) is
parsed into a label set once, with the target's labels applied; later scrapes
of the same line only split off and convert the value. OpenMetrics bodies go
through the same path once their exemplars are split off (a sample's
timestamp is in seconds there, in milliseconds in the text format); the
exemplars come back as ``ParsedScrape.exemplars``, for the exemplar store.

The edge agent's pushes and scrapes, and OpenMetrics files replayed by ``edge simulate``, go
through the same line parser (``parse_text``, ``parse_line``): one implementation of the format.

>>> samples, kinds = parse_text('# TYPE a_total counter\\na_total{x="1"} 3 1500\\nb 2.5\\n', now=10.0)
>>> [(str(s.labels), s.t, s.v) for s in samples], kinds["a_total"].value
([('a_total{x="1"}', 1.5, 3.0), ('b', 10.0, 2.5)], 'counter')
"""

from __future__ import annotations

import codecs
import math
import operator
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import compress, repeat

from inferwatch._exceptions import InputError
from inferwatch.formats._lines import sample_lines
from inferwatch.formats._series_batch import Numbered, numbered_series
from inferwatch.formats._warm import WarmLayout, comment_lines
from inferwatch.model import METRIC_NAME_LABEL, Labels, MetricKind, Sample, check_deadline

__all__ = ["ExpositionParser", "ParsedScrape", "parse_line", "parse_text"]

_NAME_RE = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_LABEL_RE = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\\n]|\\.)*)"\s*(,?)\s*')
_KEY, _VALUE = operator.itemgetter(0), operator.itemgetter(2)
_PAIR = r'\s*[a-zA-Z_][a-zA-Z0-9_]*\s*=\s*"(?:[^"\\\n]|\\.)*"\s*'
_BODY_RE = re.compile(rf"(?:{_PAIR},)*(?:{_PAIR})?")
"""A whole well-formed label body: then one ``findall`` splits it (the loop below names a bad one)."""
_UNESCAPE_RE = re.compile(r"\\(.)")
_UNESCAPES = {"n": "\n", "\\": "\\", '"': '"'}
_QUOTED_OR_PLAIN = r'(?:[^"}]|"(?:[^"\\]|\\.)*")*'
_OM_EXEMPLAR_RE = re.compile(
    rf"^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{{{_QUOTED_OR_PLAIN}\}})?)[ \t]+(\S+(?:[ \t]+\S+)?)"
    rf"[ \t]+#[ \t]+\{{({_QUOTED_OR_PLAIN})\}}[ \t]+(\S+)(?:[ \t]+(\S+))?[ \t]*$"
)
"""``series value [ts] # {labels} value [ts]``: an OpenMetrics sample line carrying an exemplar."""


_BLOCK = 8192
"""Lines per C-level call in the fast path: a few milliseconds holding the interpreter lock."""


def _ends_with_eof(raw: bytes) -> bool:
    return raw.rstrip().rpartition(b"\n")[2].strip() == b"# EOF"


def _unescape(value: str) -> str:
    if "\\" not in value:
        return value
    return _UNESCAPE_RE.sub(lambda m: _UNESCAPES.get(m.group(1), "\\" + m.group(1)), value)


def _parse_series(key: str, lineno: int) -> tuple[str, list[tuple[str, str]]]:
    """Split ``name{a="1",b="2"}`` into the name and the label pairs."""
    m = _NAME_RE.match(key)
    if not m:
        raise InputError(f"line {lineno}: invalid metric name in {key[:80]!r}")
    name, pos = m.group(0), m.end()
    labels: list[tuple[str, str]] = []
    rest = key[pos:].strip()
    if not rest:
        return name, labels
    if not (rest.startswith("{") and rest.endswith("}")):
        raise InputError(f"line {lineno}: expected {{labels}} after {name!r}, got {rest[:80]!r}")
    body, pos = rest[1:-1], 0
    if _BODY_RE.fullmatch(body):  # a new series' labels in two C-level scans, not a match per label
        return name, [(k, _unescape(v)) for k, v, _ in _LABEL_RE.findall(body)]
    while pos < len(body):
        lm = _LABEL_RE.match(body, pos)
        if not lm or lm.end() == pos or (not lm.group(3) and lm.end() != len(body)):
            raise InputError(f"line {lineno}: invalid labels in {key[:80]!r} at offset {pos}")
        labels.append((lm.group(1), _unescape(lm.group(2))))
        pos = lm.end()
    return name, labels


@dataclass
class ParsedScrape:
    """One scrape as columns; ``tracked`` are the series subject to staleness (no explicit time)."""

    labels: list[Labels] = field(default_factory=list)
    t: list[float] = field(default_factory=list)
    v: list[float] = field(default_factory=list)
    tracked: dict[str, Labels] = field(default_factory=dict)
    series_added: int = 0
    exemplars: list[tuple[Labels, dict[str, str], float, float | None]] = field(default_factory=list)
    """OpenMetrics exemplars: (series, exemplar labels, value, time or None: the scrape's)."""
    distinct: bool | None = None
    """Whether every series is there once (``None``: not known; the caller checks)."""
    comments: str | None = None
    """The body's comment lines alone, where the parser read the rest as a warm layout (``_warm``)."""
    numbered: Numbered | None = None
    """Where every series is new and different (a first scrape), their pairs numbered for the store."""

    def __len__(self) -> int:
        return len(self.labels)


class ExpositionParser:
    r"""Parses one target's scrapes, keeping the series cache between them.

    The common case (a well-formed body) is matched line by line with one
    regular expression and converted with C-level ``map`` calls; any line the
    expression does not take sends the whole body through the line-by-line
    parser, which names the bad line.

    >>> p = ExpositionParser({"job": "api", "instance": "h:1"})
    >>> [str(ls) for ls in p.parse('# TYPE x_total counter\nx_total{code="200"} 3\n', 10.0).labels]
    ['x_total{code="200",instance="h:1",job="api"}']
    """

    def __init__(
        self, target_labels: Mapping[str, str], *, honor_labels: bool = False, honor_timestamps: bool = True
    ) -> None:
        self.target_labels = dict(target_labels)
        self.honor_labels = honor_labels
        self.honor_timestamps = honor_timestamps
        self._cache: dict[str, Labels] = {}
        # the target's pairs for the batch parse of new series (None: a value that is empty, or a
        # __name__ among them: every new series then goes line by line)
        added = tuple(sorted(self.target_labels.items()))
        usable = METRIC_NAME_LABEL not in self.target_labels and all(v != "" for _, v in added)
        self._plain: tuple[tuple[str, str], ...] | None = added if usable else None
        self._distinct = False  # whether the cache's label sets are all different
        self._seconds = False  # OpenMetrics: sample timestamps in seconds
        self._warm: tuple[str, WarmLayout] | None = None  # the last scrape's layout, by content type

    @property
    def cached(self) -> int:
        """How many series texts the cache holds (0 before the first scrape, or after an empty one)."""
        return len(self._cache)

    def parse_bytes(
        self, raw: bytes, now: float, content_type: str = "", encoding: str = "utf-8"
    ) -> ParsedScrape:
        """:meth:`parse` of a body as fetched: the last scrape's series in the same order with new values
        are read as two columns without decoding the body (``formats._warm``); the rest as ``parse``."""
        utf8 = codecs.lookup(encoding).name == "utf-8"
        kind = "om" if content_type.startswith("application/openmetrics-text") else "text"
        warm, self._warm = self._warm, None
        if warm is not None and utf8 and warm[0] == kind and (kind == "text" or _ends_with_eof(raw)):
            got = warm[1].read(raw)
            if got is not None:
                self._warm = warm
                return ParsedScrape(labels=got.labels, t=[now] * len(got.values), v=got.values,
                                    tracked=got.tracked, distinct=True, comments=got.comments)
        out = self.parse(raw.decode(encoding, errors="replace"), now, content_type)
        if not utf8:
            return out
        comments = comment_lines(raw)
        out.comments = b"".join(comments).decode(errors="replace")
        if out.distinct and not out.exemplars and len(out.tracked) == len(out.labels) and all(
                map(operator.is_, out.tracked.values(), out.labels)):
            layout = WarmLayout.remember(list(out.tracked), list(out.labels), out.tracked, comments)
            self._warm = (kind, layout) if layout is not None else None
        return out

    def parse(self, text: str, now: float, content_type: str = "") -> ParsedScrape:
        """Parse a body scraped at ``now``; ``InputError`` naming the line when it is malformed."""
        self._warm = None  # the cache below is this body's from now on
        if content_type.startswith("application/openmetrics-text"):
            return self._parse_openmetrics(text, now)
        fast = self._parse_fast(text, now)
        return fast if fast is not None else self._parse_lines(text, now)

    def _parse_openmetrics(self, text: str, now: float) -> ParsedScrape:
        """OpenMetrics: exemplars split off, then the text path with timestamps read as seconds."""
        if text.rstrip().rpartition("\n")[2].strip() != "# EOF":
            raise InputError("invalid OpenMetrics exposition: it must end with '# EOF'")
        lines, found = text.splitlines(), []
        for i, line in enumerate(lines):
            if " # {" in line and line[:1] != "#":
                m = _OM_EXEMPLAR_RE.match(line)
                if m is not None:  # else " # {" is inside a label value: the sample parser judges the line
                    lines[i] = f"{m.group(1)} {m.group(2)}"
                    found.append((i + 1, m))
        self._seconds = True
        try:
            body = "\n".join(lines)
            fast = self._parse_fast(body, now)
            out = fast if fast is not None else self._parse_lines(body, now)
        finally:
            self._seconds = False
        for lineno, m in found:
            out.exemplars.append(self._exemplar(lineno, m))
        return out

    def _exemplar(self, lineno: int, m: re.Match[str]) -> tuple[Labels, dict[str, str], float, float | None]:
        key = m.group(1)
        series = self._cache.get(key) or self._labels(key, lineno)
        _, pairs = _parse_series("x{" + m.group(3) + "}", lineno) if m.group(3).strip() else ("", [])
        try:
            value = float(m.group(4))
            t = float(m.group(5)) if m.group(5) is not None else None
        except ValueError:
            raise InputError(f"line {lineno}: bad exemplar value or time in {m.group(0)[:80]!r}") from None
        return series, dict(pairs), value, t

    def _parse_fast(self, text: str, now: float) -> ParsedScrape | None:
        """Cached series, values split off with C-level calls; ``None`` sends the body to the slow path."""
        lines = sample_lines(text)
        if not lines:
            self._cache = {}
            return ParsedScrape()
        # each line's (key, " ", value) tuple dies at once: 100,000 tuples kept alive (zip(*...))
        # set off full garbage collections over the whole heap, half a warm scrape's time.
        # A block of lines per C-level call: one call over 200,000 lines held the interpreter lock
        # for 0.1-0.2 s, and a rule round in another thread waited that long each time
        keys: list[str] = []
        v: list[float] = []
        try:
            for a in range(0, len(lines), _BLOCK):
                check_deadline()  # a scrape steps aside here while a rule round runs (the scrape loop's)
                split = list(map(str.rpartition, lines[a:a + _BLOCK], repeat(" ")))  # a block's worth alive
                keys += map(_KEY, split)
                v += map(float, map(_VALUE, split))
        except ValueError:
            return None
        get = self._cache.get
        labels: list[Labels | None] = []
        for a in range(0, len(keys), _BLOCK):
            labels += map(get, keys[a:a + _BLOCK])
        out = ParsedScrape(labels=labels, t=[now] * len(lines), v=v)  # type: ignore[arg-type]
        explicit: set[int] = set()
        if any(map(operator.is_, labels, repeat(None))):  # not "None in": that calls Labels.__eq__
            seen: dict[str, Labels] = {}
            missing = list(compress(range(len(labels)), map(operator.is_, labels, repeat(None))))
            if self._plain is not None:  # new series as one batch; the rest (if any) line by line
                made, numbered = numbered_series(
                    keys if len(missing) == len(keys) else [keys[k] for k in missing], self._plain)
                if len(missing) == len(keys) and not any(map(operator.is_, made, repeat(None))):
                    seen.update(zip(keys, made, strict=True))  # type: ignore[arg-type]
                    out.numbered = numbered if len(seen) == len(keys) else None
                    labels[:] = made if len(seen) == len(keys) else map(seen.__getitem__, keys)
                    missing = []  # a first scrape, all new and plain (a text twice: the dict's one object)
                else:
                    for k, ls in zip(missing, made, strict=True):
                        if ls is not None:
                            labels[k] = seen.setdefault(keys[k], ls)  # one object for a text seen twice
                    missing = [k for k, ls in zip(missing, made, strict=True) if ls is None]
            try:
                for k in missing:
                    key, ls, t, val, stamped = self._parse_line(lines[k].strip(), 0, now, seen)
                    keys[k], labels[k], out.t[k], v[k] = key, ls, t, val
                    if stamped:
                        explicit.add(k)
            except InputError:
                return None
            out.series_added = len(seen)
        new_cache: dict[str, Labels] = {}
        for a in range(0, len(keys), _BLOCK):
            new_cache.update(zip(keys[a:a + _BLOCK], labels[a:a + _BLOCK], strict=True))  # type: ignore[arg-type]
        if len(new_cache) != len(keys):
            out.distinct = False  # a series text twice
        elif not out.series_added and self._distinct:
            out.distinct = True  # every line's text is a different cached series: no label set to hash
        else:
            out.distinct = len(set(labels)) == len(labels)
        if not out.distinct:
            out.numbered = None  # two texts of one label set: not a batch of different new series
        self._distinct = bool(out.distinct) and len(new_cache) == len(keys)
        if explicit:
            out.tracked = {keys[k]: labels[k] for k in range(len(keys)) if k not in explicit}  # type: ignore[misc]
        else:
            out.tracked = new_cache
        self._cache = new_cache
        return out

    def _parse_line(
        self, line: str, lineno: int, now: float, seen: dict[str, Labels]
    ) -> tuple[str, Labels, float, float, bool]:
        """One sample line: (series key, labels, time, value, whether the time was explicit)."""
        brace = line.rfind("}")
        if brace >= 0:
            key, rest = line[: brace + 1], line[brace + 1 :].split()
        else:
            rest = line.split()
            key = rest.pop(0)
        labels = seen.get(key) or self._cache.get(key)
        if labels is None:
            labels = seen[key] = self._labels(key, lineno)
        try:
            if len(rest) not in (1, 2):
                raise ValueError
            v = float(rest[0])
            stamp = (float(rest[1]) * 1000 if self._seconds else int(rest[1])) if len(rest) == 2 else None
            if stamp is not None and not math.isfinite(stamp):
                raise ValueError
        except ValueError:
            raise InputError(
                f"line {lineno}: expected 'series value [timestamp_ms]', got {line[:80]!r}"
            ) from None
        if stamp is not None and self.honor_timestamps:
            return key, labels, stamp / 1000.0, v, True
        return key, labels, now, v, False

    def _parse_lines(self, text: str, now: float) -> ParsedScrape:
        """Line by line; errors name the line."""
        out = ParsedScrape()
        new: dict[str, Labels] = {}
        cache: dict[str, Labels] = {}
        for lineno, raw in enumerate(text.splitlines(), 1):
            line = raw.strip()
            if not line or line[0] == "#":
                continue
            key, labels, t, v, stamped = self._parse_line(line, lineno, now, new)
            cache[key] = labels
            out.labels.append(labels)
            out.t.append(t)
            out.v.append(v)
            if not stamped:
                out.tracked[key] = labels
        out.series_added = len(new)
        self._cache = cache
        self._distinct = False
        return out

    def _labels(self, key: str, lineno: int) -> Labels:
        name, pairs = _parse_series(key, lineno)
        exposed: dict[str, str] = {}
        for k, v in pairs:
            if k in exposed:
                raise InputError(f"line {lineno}: label {k!r} given twice in {key[:80]!r}")
            if not k.startswith("__"):
                exposed[k] = v
        return self._with_target_labels(name, exposed)

    def _with_target_labels(self, name: str, exposed: dict[str, str]) -> Labels:
        """Apply the target's labels as Prometheus does (``exported_`` on conflict unless honoring)."""
        merged = dict(exposed)
        for k, v in self.target_labels.items():
            if self.honor_labels:
                merged.setdefault(k, v)
                continue
            if exposed.get(k):
                new = "exported_" + k
                while new in exposed:
                    new = "exported_" + new
                merged[new] = merged.pop(k)
            merged[k] = v
        merged[METRIC_NAME_LABEL] = name
        # names are unique (a dict's keys) and str: sorted, they need none of the constructor's checks
        items = sorted(merged.items())
        if "" in merged.values():  # an empty value is no label, as Labels() drops it
            items = [kv for kv in items if kv[1] != ""]
        return Labels.from_sorted(tuple(items))


_TEXT = ExpositionParser({})  # no target labels; its cache stays empty (``_parse_line`` only reads it)
_SECONDS = ExpositionParser({})
_SECONDS._seconds = True  # OpenMetrics files: timestamps in seconds
_KINDS = {k.value: k for k in MetricKind}


def parse_line(line: str, lineno: int, *, now: float, seconds: bool = False) -> tuple[Sample, bool]:
    """One sample line (stripped): the sample and whether it had a timestamp (ms; ``seconds``: s)."""
    _, labels, t, v, stamped = (_SECONDS if seconds else _TEXT)._parse_line(line, lineno, now, {})
    return Sample(labels, t, v), stamped


def parse_text(text: str, *, now: float) -> tuple[list[Sample], dict[str, MetricKind]]:
    """Samples (stamped ``now`` unless the line has a timestamp) and the ``# TYPE`` of each family."""
    samples: list[Sample] = []
    kinds: dict[str, MetricKind] = {}
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if line.startswith("#"):
            parts = line.split()
            if len(parts) >= 4 and parts[1] == "TYPE" and parts[3] in _KINDS:
                kinds[parts[2]] = _KINDS[parts[3]]
        elif line:
            samples.append(parse_line(line, lineno, now=now)[0])
    for family, kind in list(kinds.items()):
        if kind is MetricKind.COUNTER and not family.endswith("_total"):
            kinds[family + "_total"] = kind
    return samples, kinds
