"""The embedded server: scrape loop, store, rule evaluation, HTTP API (``inferwatch serve``)."""

from inferwatch.server._exposition import ExpositionParser, ParsedScrape
from inferwatch.server._scrape import REPORT_METRICS, ScrapeLoop, TargetHealth

__all__ = ["REPORT_METRICS", "ExpositionParser", "ParsedScrape", "ScrapeLoop", "TargetHealth"]
