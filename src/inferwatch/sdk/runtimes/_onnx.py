"""ONNX Runtime: ``monitor.instrument_onnx(session)`` times every run and says which provider it runs on.

The wrapper keeps the session's interface (``run``, ``get_inputs``, ``io_binding``...: anything it
does not time is the session's own). On the hot path a run costs two clock reads, the batch size
(the first input's leading dimension) and one append to the SDK's queue; a span when tracing is on.
The session's execution providers are read at every scrape: what it asked for first
(``requested_provider``) beside what it runs on first (``provider``), the evidence of the default
rule ``ExecutionProviderFallback``. ONNX Runtime forgets the providers it could not register, so
the request comes from ``onnx_session`` (which remembers it), from ``requested_providers=``, or else
from the providers the session had when it was instrumented (a fallback at run time still shows).

``onnxruntime`` is imported here only inside ``onnx_session``: ``import inferwatch.sdk`` stays light.
"""

from __future__ import annotations

import logging
import os
import warnings
import weakref
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from inferwatch._exceptions import ConfigError
from inferwatch.model import metrics as catalog
from inferwatch.sdk.runtimes._onnx_placement import CPU, Placement, from_assignment, from_profile
from inferwatch.sdk.runtimes._runtime_metrics import RUNTIME, Described, RuntimeKey

if TYPE_CHECKING:
    from inferwatch.sdk._hooks import MonitorHooks

__all__ = ["INSTALL_HINT", "InstrumentedBinding", "InstrumentedSession", "onnx_session", "provider_names"]

log = logging.getLogger("inferwatch.sdk")

INSTALL_HINT = "ONNX Runtime is not installed: pip install 'inferwatch[onnx]' (or onnxruntime-gpu)"
ASSIGNMENT_ENTRY = "session.record_ep_graph_assignment_info"
"""The session config entry that makes ONNX Runtime keep the graph's placement by provider."""

_REQUESTED: weakref.WeakKeyDictionary[Any, tuple[str, ...]] = weakref.WeakKeyDictionary()
"""What ``onnx_session`` asked for, per session it made (ONNX Runtime drops unavailable ones)."""


def provider_names(providers: Sequence[Any] | None) -> tuple[str, ...]:
    """Provider names from ONNX Runtime's ``providers`` argument (names or ``(name, options)``)."""
    return tuple(p[0] if isinstance(p, tuple) else str(p) for p in providers or ())


def onnx_session(path_or_bytes: str | bytes | os.PathLike[str], providers: Sequence[Any] | None = None,
                 sess_options: Any = None, **kwargs: Any) -> Any:
    """An ``onnxruntime.InferenceSession`` that remembers the providers asked for and its placement.

    ONNX Runtime's warning about a provider it does not have becomes one log line (inferwatch
    reports the fallback as a metric and an alert instead).
    """
    try:
        import onnxruntime as ort
    except ImportError as exc:
        raise ConfigError(INSTALL_HINT) from exc
    options = sess_options if sess_options is not None else ort.SessionOptions()
    try:
        options.add_session_config_entry(ASSIGNMENT_ENTRY, "1")
    except Exception:  # an older ONNX Runtime: placement then comes from profiling only
        log.debug("inferwatch onnx: %s not supported by this onnxruntime", ASSIGNMENT_ENTRY)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        session = ort.InferenceSession(path_or_bytes, options, providers=providers, **kwargs)
    for w in caught:
        if "not in available provider names" in str(w.message):
            log.warning("inferwatch onnx: %s", w.message)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    _REQUESTED[session] = provider_names(providers) or tuple(session.get_providers())
    return session


class InstrumentedSession:
    """An ONNX Runtime session whose runs are recorded (made by ``Monitor.instrument_onnx``)."""

    def __init__(self, session: Any, monitor: MonitorHooks, key: RuntimeKey,
                 requested: Sequence[str] | None = None) -> None:
        self.session = session
        """The wrapped ``onnxruntime.InferenceSession``."""
        self._monitor, self._key = monitor, key
        self._observe, self._mono = monitor.observe, monitor.monotonic
        self._traced = monitor.tracing is not None  # a monitor's tracing is fixed at construction
        self.requested: tuple[str, ...] = tuple(requested or ()) or _requested_of(session)
        """The execution providers the session asked for, preferred first."""
        self.placement: Placement | None = from_assignment(session)
        """Graph nodes by provider (None until ONNX Runtime says: assignment info or a profile)."""

    # --- hot path ---------------------------------------------------------------------------
    def run(self, output_names: Sequence[str] | None, input_feed: Mapping[str, Any],
            run_options: Any = None) -> Any:
        """``session.run``, timed, its batch size recorded; a span under the current one when tracing."""
        if self._traced:
            return self._run_traced(output_names, input_feed, run_options)
        mono = self._mono
        t0 = mono()
        try:
            out = self.session.run(output_names, input_feed, run_options)
        except BaseException:
            self._observe(RUNTIME, (self._key, mono() - t0, 0, True, ""))
            raise
        dt = mono() - t0
        self._observe(RUNTIME, (self._key, dt, _batch_of(input_feed), False, ""))
        return out

    def run_with_iobinding(self, iobinding: Any, run_options: Any = None) -> Any:
        """``session.run_with_iobinding``: the compute phase (inputs bound before, outputs copied after)."""
        binding = iobinding.binding if isinstance(iobinding, InstrumentedBinding) else iobinding
        t0 = self._mono()
        try:
            out = self.session.run_with_iobinding(binding, run_options)
        except BaseException:
            self._observe(RUNTIME, (self._key, self._mono() - t0, 0, True, ""))
            raise
        dt = self._mono() - t0
        batch = 0
        if isinstance(iobinding, InstrumentedBinding):
            batch = iobinding.take_input(self._observe, self._key)
        self._observe(RUNTIME, (self._key, dt, batch, False, ""))
        self._observe(RUNTIME, (self._key, dt, 0, False, "compute"))
        return out

    def io_binding(self) -> InstrumentedBinding:
        """The session's ``IOBinding``, timing input binding and output copies as phases."""
        return InstrumentedBinding(self.session.io_binding(), self)

    def _run_traced(self, output_names: Any, input_feed: Mapping[str, Any], run_options: Any) -> Any:
        tracing = self._monitor.tracing
        assert tracing is not None
        runtime, model, version = self._key
        with tracing.tracer.start_as_current_span("onnxruntime.run", attributes={
            "inferwatch.runtime": runtime, "inferwatch.model": model, "inferwatch.version": version,
        }) as span:
            t0 = self._mono()
            try:
                out = self.session.run(output_names, input_feed, run_options)
            except BaseException:
                self._observe(RUNTIME, (self._key, self._mono() - t0, 0, True, ""))
                raise
            batch = _batch_of(input_feed)
            self._observe(RUNTIME, (self._key, self._mono() - t0, batch, False, ""))
            span.set_attribute("inferwatch.batch_size", batch)
            span.set_attribute("onnxruntime.provider", self._actual()[0] if self._actual() else "")
            return out

    # --- off the hot path -------------------------------------------------------------------
    def end_profiling(self) -> str:
        """``session.end_profiling``; the profile's per-node placement becomes ``placement``."""
        path = str(self.session.end_profiling())
        placement = from_profile(path)
        if placement is not None:
            self.placement = placement
        return path

    def describe(self) -> Described:
        """The session's info and node placement, read now (called at each scrape)."""
        actual = self._actual()
        requested = self.requested[0] if self.requested else ""
        first = actual[0] if actual else ""
        cpu_nodes = ""
        if self.placement is not None and requested and requested != CPU:
            cpu_nodes = self.placement.cpu_nodes()
        out: list[tuple[catalog.MetricSpec, tuple[str, ...], float]] = [
            (catalog.ONNX_SESSION_INFO, (requested, first, cpu_nodes), 1.0)]
        if self.placement is not None:
            out += [(catalog.ONNX_SESSION_NODES, (p,), float(n)) for p, n in self.placement.counts()]
        return Described(tuple(out))

    def _actual(self) -> tuple[str, ...]:
        return tuple(self.session.get_providers() or ())

    def __getattr__(self, name: str) -> Any:
        return getattr(self.session, name)

    def __repr__(self) -> str:
        _, model, version = self._key
        return f"InstrumentedSession(model={model!r}, version={version!r}, providers={list(self._actual())})"


class InstrumentedBinding:
    """An ``IOBinding`` whose input binding and output copies are timed (phases ``input``, ``output``)."""

    def __init__(self, binding: Any, session: InstrumentedSession) -> None:
        self.binding = binding
        """The wrapped ``onnxruntime.IOBinding``."""
        self._session = session
        self._input_s = 0.0
        self._batch = 0

    def _timed(self, method: str, *args: Any, **kwargs: Any) -> Any:
        mono = self._session._mono
        t0 = mono()
        out = getattr(self.binding, method)(*args, **kwargs)
        self._input_s += mono() - t0
        return out

    def bind_cpu_input(self, name: str, arr: Any) -> None:
        """Bind (and copy to the session's device) a numpy input: timed as the input phase."""
        if not self._batch:
            self._batch = _leading(arr)
        self._timed("bind_cpu_input", name, arr)

    def bind_input(self, *args: Any, **kwargs: Any) -> None:
        """Bind an input already in memory (timed as the input phase)."""
        self._timed("bind_input", *args, **kwargs)

    def bind_ortvalue_input(self, name: str, ortvalue: Any) -> None:
        """Bind an ``OrtValue`` input (timed as the input phase)."""
        if not self._batch:
            self._batch = _leading(ortvalue)
        self._timed("bind_ortvalue_input", name, ortvalue)

    def take_input(self, observe: Any, key: RuntimeKey) -> int:
        """Record the input phase bound since the last run; the batch size it saw."""
        if self._input_s:
            observe(RUNTIME, (key, self._input_s, 0, False, "input"))
        batch, self._input_s, self._batch = self._batch, 0.0, 0
        return batch

    def copy_outputs_to_cpu(self) -> Any:
        """Copy the outputs back to the host: timed as the output phase."""
        s = self._session
        t0 = s._mono()
        out = self.binding.copy_outputs_to_cpu()
        s._observe(RUNTIME, (s._key, s._mono() - t0, 0, False, "output"))
        return out

    def __getattr__(self, name: str) -> Any:
        return getattr(self.binding, name)


def _requested_of(session: Any) -> tuple[str, ...]:
    try:
        return _REQUESTED.get(session) or tuple(session.get_providers() or ())
    except TypeError:  # not weak-referenceable: not one of ours
        return tuple(session.get_providers() or ())


def _leading(value: Any) -> int:
    """The leading dimension of an array or ``OrtValue`` (0 when unknown: never raises)."""
    try:
        shape = value.shape
        if callable(shape):  # OrtValue.shape()
            shape = shape()
        n = shape[0]
        return n if type(n) is int and n > 0 else 0
    except Exception:
        return 0


def _batch_of(feed: Mapping[str, Any]) -> int:
    """The first input's leading dimension: a numpy array's on the fast path (never raises)."""
    try:
        for value in feed.values():
            shape = getattr(value, "shape", None)
            if shape.__class__ is tuple and shape:
                n = shape[0]
                return n if n.__class__ is int and n > 0 else 0
            return _leading(value)  # an OrtValue (``shape()``), a list...
    except Exception:
        pass
    return 0
