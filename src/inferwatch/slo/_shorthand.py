"""The config's ``slos:`` shorthands, written as the Sloth events they stand for.

* availability: requests answered without a 5xx, over all requests
  (``inferwatch_requests_total``);
* latency: requests answered within ``threshold`` (the request histogram's
  ``le`` bucket), over all requests;
* time_to_first_token: generations whose first token came within
  ``threshold`` (the generation TTFT histogram), over all generations.
"""

from __future__ import annotations

from inferwatch.config import SloSpec
from inferwatch.model import metrics
from inferwatch.slo._model import WINDOW_TEMPLATE, AlertSpec, EventsSli, Slo

__all__ = ["shorthand_slo"]

_W = WINDOW_TEMPLATE


def _sel(name: str, *matchers: str) -> str:
    inner = ",".join(m for m in matchers if m)
    return f"{name}{{{inner}}}"


def _le(bound: float) -> str:
    return repr(float(bound))  # as the SDK prints it (sdk/_requests.py: 0.5, 1.0)


def _sli(spec: SloSpec) -> EventsSli:
    svc = f'service="{spec.service}"'
    if spec.type == "availability":
        name = metrics.REQUESTS_TOTAL.name
        errors = _sel(name, svc, spec.matchers, 'code=~"5.."')
        # `or vector(0)`: a service that never failed has no 5xx series, yet its SLI is 100 %, not absent
        return EventsSli(f"(sum(rate({errors}[{_W}])) or vector(0))",
                         f"sum(rate({_sel(name, svc, spec.matchers)}[{_W}]))")
    hist = metrics.REQUEST_DURATION.name if spec.type == "latency" else metrics.GENERATION_TTFT.name
    assert spec.threshold is not None
    count = f"sum(rate({_sel(hist + '_count', svc, spec.matchers)}[{_W}]))"
    bucket = _sel(hist + "_bucket", svc, spec.matchers, f'le="{_le(spec.threshold)}"')
    good = f"sum(rate({bucket}[{_W}]))"
    return EventsSli(f"({count} - {good})", count)


def _camel(text: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in text.replace("_", "-").split("-") if p)


_SUMMARY = {
    "availability": "{service}: over {budget:g}% of requests fail (objective {objective:g}%)",
    "latency": "{service}: over {budget:g}% of requests take longer than {threshold:g}s "
               "(objective {objective:g}%)",
    "time_to_first_token": "{service}: over {budget:g}% of generations wait longer than {threshold:g}s "
                           "for their first token (objective {objective:g}%)",
}


def shorthand_slo(spec: SloSpec, index: int) -> Slo:
    """The ``slos[index]`` entry as an SLO on the SDK's metrics."""
    name = spec.slo_name
    summary = _SUMMARY[spec.type].format(service=spec.service, budget=100 - spec.objective,
                                         threshold=spec.threshold or 0, objective=spec.objective)
    alert = spec.alert_name or f"SLO{_camel(spec.service)}{_camel(name)}"
    alerting = AlertSpec(alert, annotations={
        "summary": summary,
        "description": "The {{ $labels.sloth_slo }} SLO of {{ $labels.sloth_service }} burns its error "
                       "budget too fast.",
    })
    return Slo(spec.service, name, spec.objective, _sli(spec), alerting, period=spec.period,
               labels=dict(spec.labels), description=spec.description or summary,
               min_events=spec.min_events, tiers=spec.tiers, source=f"slos[{index}]", kind=spec.type)
