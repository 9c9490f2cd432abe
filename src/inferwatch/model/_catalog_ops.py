"""The catalog's operations sections: the edge agent and devices, the server's scrape
health and self-metrics."""

from __future__ import annotations

from inferwatch.model._metric_spec import _C, _G, MetricSpec

# --- edge: the agent's own series (sent like any other) and the server's view of devices ---
EDGE_SPOOL_BACKLOG = MetricSpec(
    "inferwatch_edge_spool_backlog_samples", _G, "Samples in the edge agent's spool, not yet delivered.",
)
EDGE_SPOOL_DROPPED_TOTAL = MetricSpec(
    "inferwatch_edge_spool_dropped_total", _C,
    "Samples the edge agent's spool dropped, by reason (age, bytes, disk_full, damaged).", ("reason",),
)
EDGE_DEADBAND_SAMPLES_TOTAL = MetricSpec(
    "inferwatch_edge_deadband_samples_total", _C,
    "Samples the edge agent read, by outcome (sent, held by the deadband).", ("outcome",),
)
EDGE_HEARTBEAT_SECONDS = MetricSpec(
    "inferwatch_edge_heartbeat_seconds", _G, "The edge agent's heartbeat: a quiet series reports this often.",
    unit="seconds",
)
EDGE_LAST_CONTACT = MetricSpec(
    "inferwatch_edge_last_contact_timestamp_seconds", _G,
    "When the server last received a batch from the device (server time).", ("device",), "seconds",
)
EDGE_DEVICE_SILENCE = MetricSpec(
    "inferwatch_edge_device_silence_seconds", _G,
    "Seconds since the server last received a batch from the device (site: as its agent reports it).",
    ("device", "site"), "seconds",
)
EDGE_DEVICE_HEARTBEAT = MetricSpec(
    "inferwatch_edge_device_heartbeat_seconds", _G,
    "The device's heartbeat as its last batch announced it (a quiet series reports this often).",
    ("device", "site"), "seconds",
)
EDGE_INGESTED_SAMPLES_TOTAL = MetricSpec(
    "inferwatch_edge_ingested_samples_total", _C,
    "Samples the server accepted from edge devices, by device.", ("device",),
)
EDGE_DUPLICATE_BATCHES_TOTAL = MetricSpec(
    "inferwatch_edge_duplicate_batches_total", _C,
    "Edge batches received again (a retry of one already stored) and not stored twice.", ("device",),
)

# --- server: delayed labels (POST /api/v1/outcomes), written to the store as it takes them ---
OUTCOMES_RECEIVED_TOTAL = MetricSpec(
    "inferwatch_outcomes_received_total", _C, "Outcomes (delayed labels) the server accepted and stored.",
)
OUTCOMES_DROPPED_TOTAL = MetricSpec(
    "inferwatch_outcomes_dropped_total", _C,
    "Outcomes the server deleted before their time, by reason (age: past retention; rows: over max_rows).",
    ("reason",),
)
OUTCOMES_STORED = MetricSpec("inferwatch_outcomes_stored", _G, "Outcomes the server keeps for pollers now.")

# --- server: scrape health ---------------------------------------------------
UP = MetricSpec("up", _G, "1 if the last scrape of the target succeeded, 0 if not.", ("job", "instance"))

# --- server: its own /metrics (Prometheus's and Alertmanager's self-metrics, renamed) ---
BUILD_INFO = MetricSpec(
    "inferwatch_build_info", _G, "inferwatch version and the Python it runs on (always 1).",
    ("version", "python"),
)
RULE_EVALUATIONS_TOTAL = MetricSpec(
    "inferwatch_rule_evaluations_total", _C, "Rule evaluation rounds.",
)
RULE_EVALUATION_FAILURES_TOTAL = MetricSpec(
    "inferwatch_rule_evaluation_failures_total", _C, "Rule evaluation rounds that raised.",
)
RULE_EVALUATION_SECONDS_TOTAL = MetricSpec(
    "inferwatch_rule_evaluation_duration_seconds_total", _C,
    "Seconds spent evaluating rules, over all rounds.", (), "seconds",
)
RULE_GROUP_LAST_DURATION = MetricSpec(
    "inferwatch_rule_group_last_duration_seconds", _G, "Duration of the last evaluation round.",
    (), "seconds",
)
RULE_GROUP_LAST_CPU = MetricSpec(
    "inferwatch_rule_group_last_cpu_seconds", _G,
    "CPU seconds the last evaluation round used (its duration less this: waiting for a core or the "
    "interpreter lock).", (), "seconds",
)
RULE_GROUP_LAST_EVALUATION = MetricSpec(
    "inferwatch_rule_group_last_evaluation_timestamp_seconds", _G,
    "Time of the last evaluation round (0 before the first).", (), "seconds",
)
RULE_GROUP_ITERATIONS_TOTAL = MetricSpec(
    "inferwatch_rule_group_iterations_total", _C, "Evaluation rounds scheduled, run or missed.",
)
RULE_GROUP_ITERATIONS_MISSED_TOTAL = MetricSpec(
    "inferwatch_rule_group_iterations_missed_total", _C,
    "Evaluation rounds skipped because the round before ran past their start.",
)
RULE_GROUP_INTERVAL = MetricSpec(
    "inferwatch_rule_group_interval_seconds", _G, "The evaluation interval.", (), "seconds",
)
QUERY_PRIORITY_WAIT_SECONDS_TOTAL = MetricSpec(
    "inferwatch_query_rule_priority_wait_seconds_total", _C,
    "Seconds API queries spent waiting for rule rounds to finish (rules go first).", (), "seconds",
)
QUERY_FORKS_TOTAL = MetricSpec(
    "inferwatch_query_forks_total", _C,
    "Heavy API queries evaluated in a forked child process (server.query.isolation: fork).",
)
QUERY_FORK_FAILURES_TOTAL = MetricSpec(
    "inferwatch_query_fork_failures_total", _C,
    "Query children that died without an answer, or were killed at the query's timeout or cancel.",
)
QUERY_FORK_SECONDS_TOTAL = MetricSpec(
    "inferwatch_query_fork_seconds_total", _C,
    "Seconds the server spent in os.fork for queries (its memory lock held meanwhile).", (), "seconds",
)
QUERY_FORK_CHILDREN = MetricSpec("inferwatch_query_fork_children", _G, "Query children running now.")
QUERY_FORK_SLOT_WAITS_TOTAL = MetricSpec(
    "inferwatch_query_fork_slot_waits_total", _C,
    "Heavy queries that waited for a child's slot (server.query.fork_max_children were running).",
)
QUERY_FORK_SLOT_WAIT_SECONDS_TOTAL = MetricSpec(
    "inferwatch_query_fork_slot_wait_seconds_total", _C,
    "Seconds heavy queries spent waiting for a child's slot (counted against their timeout).", (), "seconds",
)
QUERY_FORK_SLOT_WAITING = MetricSpec(
    "inferwatch_query_fork_slot_waiting", _G, "Heavy queries waiting now for a child's slot.",
)
QUERY_SHARED_TOTAL = MetricSpec(
    "inferwatch_query_shared_total", _C,
    "Heavy queries answered with an identical query's evaluation that was already running (single-flight).",
)
QUERY_ON_LOOP_TOTAL = MetricSpec(
    "inferwatch_query_on_event_loop_total", _C,
    "Small API queries evaluated on the event loop, without a worker thread (server.query.isolation: fork).",
)
RULE_GROUP_RULES = MetricSpec("inferwatch_rule_group_rules", _G, "Rules loaded.")
ALERTS = MetricSpec("inferwatch_alerts", _G, "Active alerts by state.", ("state",))
TARGETS = MetricSpec("inferwatch_targets", _G, "Scrape targets by health.", ("health",))
SD_FAILING = MetricSpec(
    "inferwatch_sd_failing", _G,
    "1 while a discovery source's last refresh failed (its last good targets are kept; the log says why).",
    ("job", "mechanism"),
)
SD_REFRESH_FAILURES_TOTAL = MetricSpec(
    "inferwatch_sd_refresh_failures_total", _C, "Failed refreshes of a discovery source.",
    ("job", "mechanism"),
)
SD_DISCOVERED_TARGETS = MetricSpec(
    "inferwatch_sd_discovered_targets", _G,
    "Targets a job's discovery found, active (scraped) or dropped by relabel_configs.", ("job", "state"),
)
STORAGE_BYTES = MetricSpec(
    "inferwatch_storage_bytes", _G, "Bytes on disk of the SQLite store (with its WAL).", (), "bytes",
)
STORAGE_CHECKPOINTS_TOTAL = MetricSpec(
    "inferwatch_storage_checkpoints_total", _C,
    "WAL checkpoints of the SQLite store run by its background thread (they sync the disk).",
)
STORAGE_CHECKPOINT_FAILURES_TOTAL = MetricSpec(
    "inferwatch_storage_checkpoint_failures_total", _C,
    "WAL checkpoints of the SQLite store that failed (a full disk); the WAL grows meanwhile.",
)
STORAGE_SERIES = MetricSpec(
    "inferwatch_storage_series", _G, "Series the store holds (they count toward server.limits.max_series).",
)
STORAGE_HEAD_SAMPLES = MetricSpec(
    "inferwatch_storage_head_samples", _G, "Samples the store's in-memory head holds (its last head_window).",
)
STORAGE_HEAD_BYTES = MetricSpec(
    "inferwatch_storage_head_bytes", _G, "Bytes the head's sample buffers take, their spare room included.",
    (), "bytes",
)
STORAGE_SERIES_LIMIT = MetricSpec(
    "inferwatch_storage_series_limit", _G, "server.limits.max_series: new series beyond it are refused "
    "(0: no limit).",
)
DISCARDED_SAMPLES_TOTAL = MetricSpec(
    "inferwatch_discarded_samples_total", _C,
    "Samples refused at ingest, by the limit or check that refused them (their batch is refused whole).",
    ("reason",),
)
STORAGE_WRITE_FAILING = MetricSpec(
    "inferwatch_storage_write_failing", _G,
    "1 while the store's last write failed (disk full, read-only, I/O error): samples are not being stored.",
)
STORAGE_FAILED_SAMPLES_TOTAL = MetricSpec(
    "inferwatch_storage_failed_samples_total", _C,
    "Samples a failed store write kept out, by reason (disk_full, read_only, io_error, corrupt, other).",
    ("reason",),
)
ALERTING_STATE_HELD_WRITES = MetricSpec(
    "inferwatch_alerting_state_held_writes", _G,
    "Writes of the alerting state held in memory while its file refuses them (disk full, read-only, "
    "I/O error); written to the file when it takes writes again.",
)
ALERTING_STATE_HELD_TOTAL = MetricSpec(
    "inferwatch_alerting_state_held_transactions_total", _C,
    "Transactions of the alerting state kept in memory because its file refused them.",
)
STORAGE_FILESYSTEM_AVAIL = MetricSpec(
    "inferwatch_storage_filesystem_avail_bytes", _G,
    "Bytes free to the server on the data directory's filesystem (as node_filesystem_avail_bytes).",
    (), "bytes",
)
STORAGE_FILESYSTEM_SIZE = MetricSpec(
    "inferwatch_storage_filesystem_size_bytes", _G, "Size of the data directory's filesystem.", (), "bytes",
)
STORE_CORRUPTIONS_TOTAL = MetricSpec(
    "inferwatch_store_corruptions_total", _C,
    "Damaged SQLite files of the data directory found (and repaired) since the server started, by file.",
    ("file",),
)
STORE_LOST_SERIES = MetricSpec(
    "inferwatch_store_lost_series", _G,
    "Series that lost samples in the last repair of a damaged file (0 for files without series).",
    ("file",),
)
CONFIG_LAST_RELOAD_SUCCESSFUL = MetricSpec(
    "inferwatch_config_last_reload_successful", _G, "1 if the last config load or reload succeeded.",
)
CONFIG_LAST_RELOAD_SUCCESS = MetricSpec(
    "inferwatch_config_last_reload_success_timestamp_seconds", _G,
    "Time of the last successful config load or reload.", (), "seconds",
)
NOTIFICATIONS_TOTAL = MetricSpec(
    "inferwatch_notifications_total", _C, "Notifications by receiver and status (sent, failed).",
    ("receiver", "status"),
)
ACTIONS_TOTAL = MetricSpec(
    "inferwatch_actions_total", _C, "Action runs by action and result (ok, failed, deduplicated).",
    ("action", "result"),
)
NOTIFICATION_QUEUE_LENGTH = MetricSpec(
    "inferwatch_notification_queue_length", _G,
    "Notifications owed to a receiver (waiting, retrying, rate-limited or in flight).", ("receiver",),
)
NOTIFICATION_QUEUE_OLDEST_AGE = MetricSpec(
    "inferwatch_notification_queue_oldest_age_seconds", _G,
    "Age of the oldest notification owed to a receiver (0 when none).", ("receiver",), "seconds",
)
# --- the dead man's switch: the Watchdog sent out, heartbeats watched in (docs/heartbeats.md) ---
HEARTBEAT_SENDS_TOTAL = MetricSpec(
    "inferwatch_heartbeat_sends_total", _C,
    "Watchdog heartbeats sent to the outside dead man's switch (failed ones included).",
    ("kind",),
)
HEARTBEAT_SEND_FAILURES_TOTAL = MetricSpec(
    "inferwatch_heartbeat_send_failures_total", _C, "Watchdog heartbeats that failed to send.", ("kind",),
)
HEARTBEAT_CONSECUTIVE_FAILURES = MetricSpec(
    "inferwatch_heartbeat_consecutive_failures", _G,
    "Watchdog heartbeats failed in a row since the last success (HeartbeatSendFailing).", ("kind",),
)
HEARTBEATS_RECEIVED_TOTAL = MetricSpec(
    "inferwatch_heartbeats_received_total", _C, "Heartbeats received from others (`heartbeats:`).",
    ("heartbeat",),
)
HEARTBEAT_LAST_RECEIVED = MetricSpec(
    "inferwatch_heartbeat_last_received_timestamp_seconds", _G,
    "When a heartbeat last arrived (0: none since the server started).", ("heartbeat",), "seconds",
)

_REMOTE = ("remote_name", "url")
REMOTE_WRITE_PENDING = MetricSpec(
    "inferwatch_remote_write_samples_pending", _G,
    "Samples stored and queued for a remote-write receiver, not yet acknowledged.", _REMOTE,
)
REMOTE_WRITE_SENT_TOTAL = MetricSpec(
    "inferwatch_remote_write_samples_sent_total", _C, "Samples a remote-write receiver acknowledged (2xx).",
    _REMOTE,
)
REMOTE_WRITE_FAILED_TOTAL = MetricSpec(
    "inferwatch_remote_write_samples_failed_total", _C,
    "Samples a remote-write receiver refused with a 4xx that is not retried (dropped).", _REMOTE,
)
REMOTE_WRITE_DROPPED_TOTAL = MetricSpec(
    "inferwatch_remote_write_samples_dropped_total", _C,
    "Samples dropped unsent: the queue's backlog went over its bounds, or the queue could not log them.",
    _REMOTE,
)
REMOTE_WRITE_RETRIES_TOTAL = MetricSpec(
    "inferwatch_remote_write_retries_total", _C,
    "Remote-write requests retried (5xx, 429 or a network error).", _REMOTE,
)
HA_REPLICAS_KNOWN = MetricSpec(
    "inferwatch_ha_replicas_known", _G,
    "Replicas of the HA pair the shared database has ever seen (this one included).",
)
HA_REPLICAS_READY = MetricSpec(
    "inferwatch_ha_replicas_ready", _G,
    "Replicas of the HA pair seen within two leases (this one included): below known, a peer is missing.",
)
HA_LEADER = MetricSpec(
    "inferwatch_ha_leader", _G, "1 while this replica delivers (it holds the sender's lease, or fails open).",
)
HA_DATABASE_FAILING = MetricSpec(
    "inferwatch_ha_database_failing", _G,
    "1 while the HA pair's shared database cannot be reached (each replica then delivers on its own).",
)
