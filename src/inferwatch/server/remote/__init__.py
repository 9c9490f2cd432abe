"""What the server sends out: remote-write to other stores, alerts to existing Alertmanagers."""
