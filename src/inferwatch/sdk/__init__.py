"""The SDK: ``Monitor`` (non-blocking recording), middleware and exposition.

The request thread only appends to a bounded queue; one background thread
aggregates (numpy) and prometheus-client renders the exposition.
"""

from inferwatch.sdk._aggregator import Aggregator
from inferwatch.sdk._exposition import MetricsApp, MetricsServer, MonitorCollector, read_sample
from inferwatch.sdk._generation import Generation, GenerationSettings, Price
from inferwatch.sdk._middleware import AsgiMiddleware, WsgiMiddleware, route_of_scope
from inferwatch.sdk._monitor import Monitor, Tracking
from inferwatch.sdk._requests import MAX_ROUTES, OTHER_ROUTE

__all__ = [
    "MAX_ROUTES",
    "OTHER_ROUTE",
    "Aggregator",
    "AsgiMiddleware",
    "Generation",
    "GenerationSettings",
    "MetricsApp",
    "MetricsServer",
    "Monitor",
    "MonitorCollector",
    "Price",
    "Tracking",
    "WsgiMiddleware",
    "read_sample",
    "route_of_scope",
]
