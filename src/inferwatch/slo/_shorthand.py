"""The config's ``slos:`` shorthands, written as the Sloth events they stand for.

* availability: requests answered without a 5xx, over all requests
  (``inferwatch_requests_total``), plus the requests lost while the service was
  unreachable: the share of the window its probes failed (``probe_success``)
  or, without probes, its targets were down (``up``), at the request rate it
  had while it answered (docs/probes.md: "SLOs that count downtime");
* latency: requests answered within ``threshold`` (the request histogram's
  ``le`` bucket), over all requests;
* time_to_first_token: generations whose first token came within
  ``threshold`` (the generation TTFT histogram), over all generations.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from inferwatch.model import metrics
from inferwatch.settings import SloSpec
from inferwatch.slo._model import WINDOW_TEMPLATE, AlertSpec, EventsSli, Slo

__all__ = ["downtime_series", "shorthand_slo"]

_W = WINDOW_TEMPLATE


def _sel(name: str, *matchers: str) -> str:
    inner = ",".join(m for m in matchers if m)
    return f"{name}{{{inner}}}"


def _le(bound: float) -> str:
    return repr(float(bound))  # as the SDK prints it (sdk/_requests.py: 0.5, 1.0)


def downtime_series(spec: SloSpec, probed: Mapping[str, Sequence[str]]) -> str:
    """The series whose failures count as the service's downtime ("" when none is counted).

    ``probed``: each service's probes that judge reachability (golden sets judge answers, in
    batches: they are not counted).
    """
    source = spec.downtime
    names = sorted(probed.get(spec.service, ()))
    if source == "auto":
        source = "probe" if names else "up"
    if source == "none" or spec.type != "availability":
        return ""
    if source == "up":
        return _sel(metrics.UP.name, f'service="{spec.service}"')
    # probe names are [A-Za-z0-9_.:-]: only "." means something in a regex (escaped for PromQL's string too)
    which = f'probe=~"{"|".join(n.replace(".", chr(92) * 2 + ".") for n in names)}"' if names else ""
    return _sel(metrics.PROBE_SUCCESS.name, f'service="{spec.service}"', which)


def _availability(spec: SloSpec, down_series: str) -> EventsSli:
    name = metrics.REQUESTS_TOTAL.name
    svc = f'service="{spec.service}"'
    errors = _sel(name, svc, spec.matchers, 'code=~"5.."')
    # `or vector(0)`: a service that never failed has no 5xx series, yet its SLI is 100 %, not absent
    failed = f"(sum(rate({errors}[{_W}])) or vector(0))"
    served = f"sum(rate({_sel(name, svc, spec.matchers)}[{_W}]))"
    if not down_series:
        return EventsSli(failed, served)
    # The share of the window the service was unreachable (0 without the series), and the requests
    # it lost meanwhile: that share of the rate it had while it answered, or of the day's rate when
    # the whole window was down. Each lost request is a bad event, so an outage spends budget.
    down = f"(1 - (avg(avg_over_time({down_series}[{_W}])) or vector(1)))"
    day = f"sum(rate({_sel(name, svc, spec.matchers)}[1d]))"
    lost = f"({down} * (({served} / ((1 - {down}) > 0)) or {day} or vector(0)))"
    # no traffic and no downtime: no total, as without the downtime term (a 0/0 would poison the period)
    return EventsSli(f"({failed} + {lost})", f"(({served} + {lost}) or ({lost} > 0))")


def _sli(spec: SloSpec, down_series: str) -> EventsSli:
    svc = f'service="{spec.service}"'
    if spec.type == "availability":
        return _availability(spec, down_series)
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


def shorthand_slo(spec: SloSpec, index: int, probed: Mapping[str, Sequence[str]] | None = None) -> Slo:
    """The ``slos[index]`` entry as an SLO on the SDK's metrics (``probed``: services a probe carries)."""
    down_series = downtime_series(spec, probed or {})
    name = spec.slo_name
    summary = _SUMMARY[spec.type].format(service=spec.service, budget=100 - spec.objective,
                                         threshold=spec.threshold or 0, objective=spec.objective)
    alert = spec.alert_name or f"SLO{_camel(spec.service)}{_camel(name)}"
    alerting = AlertSpec(alert, annotations={
        "summary": summary,
        "description": "The {{ $labels.sloth_slo }} SLO of {{ $labels.sloth_service }} burns its error "
                       "budget too fast.",
    })
    return Slo(spec.service, name, spec.objective, _sli(spec, down_series), alerting, period=spec.period,
               labels=dict(spec.labels), description=spec.description or summary,
               min_events=spec.min_events, tiers=spec.tiers, source=f"slos[{index}]", kind=spec.type,
               downtime=down_series)
