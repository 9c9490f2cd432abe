"""The SDK: ``Monitor`` (non-blocking recording), middleware and exposition.

The request thread only appends to a bounded queue; one background thread
aggregates (numpy, loaded by the first large batch) and prometheus-client renders
the exposition. Importing the SDK loads no pydantic, starlette or numpy.
"""

from inferwatch.sdk._aggregator import Aggregator
from inferwatch.sdk._config import DEFAULT_BUCKETS, SdkConfig
from inferwatch.sdk._exposition import MetricsApp, MetricsServer, MonitorCollector, read_sample
from inferwatch.sdk._generation import Generation
from inferwatch.sdk._middleware import AsgiMiddleware, WsgiMiddleware, route_of_scope
from inferwatch.sdk._monitor import Monitor, Tracking
from inferwatch.sdk._requests import MAX_ROUTES, OTHER_ROUTE

__all__ = [
    "DEFAULT_BUCKETS",
    "MAX_ROUTES",
    "OTHER_ROUTE",
    "Aggregator",
    "AsgiMiddleware",
    "Generation",
    "MetricsApp",
    "MetricsServer",
    "Monitor",
    "MonitorCollector",
    "SdkConfig",
    "Tracking",
    "WsgiMiddleware",
    "read_sample",
    "route_of_scope",
]
