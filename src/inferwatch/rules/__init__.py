"""Rule model, signals (native evaluation and PromQL form), evaluator, alert state."""

from inferwatch.rules._alert import Alert, AlertSink, AlertState

__all__ = ["Alert", "AlertSink", "AlertState"]
