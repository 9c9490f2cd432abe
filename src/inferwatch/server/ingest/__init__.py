"""What comes into the store: scrape, remote-write in, OTLP metrics and traces, edge ingest."""
