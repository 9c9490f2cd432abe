"""The server's HTTP APIs: Prometheus 2.42, Alertmanager v2, alerting, on-call, SLOs, OpenAPI."""
