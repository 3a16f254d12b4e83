import { Counter, Gauge, Histogram, Registry } from "prom-client";

/** The recorder's Prometheus instruments, on their own registry so tests and processes never collide. */
export class RecorderMetrics {
  readonly registry = new Registry();
  readonly events = new Counter({
    name: "krply_events_ingested_total",
    help: "Records committed to the journal, by stream and record type",
    labelNames: ["stream", "type"] as const,
    registers: [this.registry],
  });
  readonly gaps = new Counter({
    name: "krply_gaps_total",
    help: "GAP records written (410 Gone), by stream",
    labelNames: ["stream"] as const,
    registers: [this.registry],
  });
  readonly reconnects = new Counter({
    name: "krply_reconnects_total",
    help: "Watch reconnects, by stream and failure kind",
    labelNames: ["stream", "kind"] as const,
    registers: [this.registry],
  });
  readonly watchErrors = new Counter({
    name: "krply_watch_errors_total",
    help: "ERROR events inside a watch (410 Gone included), by stream and status code",
    labelNames: ["stream", "code"] as const,
    registers: [this.registry],
  });
  readonly malformed = new Counter({
    name: "krply_malformed_lines_total",
    help: "Watch lines that failed to parse",
    labelNames: ["stream"] as const,
    registers: [this.registry],
  });
  readonly coverage = new Counter({
    name: "krply_coverage_changes_total",
    help: "COVERAGE_CHANGE records written, by stream and new state",
    labelNames: ["stream", "state"] as const,
    registers: [this.registry],
  });
  readonly degraded = new Gauge({
    name: "krply_streams_degraded",
    help: "Streams not currently watching (backoff, relisting or unavailable)",
    registers: [this.registry],
  });
  readonly streams = new Gauge({
    name: "krply_streams",
    help: "Streams supervised",
    registers: [this.registry],
  });
  readonly journalBytes = new Gauge({
    name: "krply_journal_bytes",
    help: "Size of the journal file and its WAL",
    registers: [this.registry],
  });
  readonly writerThread = new Gauge({
    name: "krply_journal_writer_thread",
    help: "1 for the state of the journal's writer thread (off, pending, running, failed), 0 for the others",
    labelNames: ["state"] as const,
    registers: [this.registry],
  });
  readonly journalBudget = new Gauge({
    name: "krply_journal_budget_bytes",
    help: "The journal's byte budget, resolved when it opens (0: no budget)",
    registers: [this.registry],
  });
  readonly journalUp = new Gauge({
    name: "krply_journal_up",
    help: "1 when the journal is open and checked, 0 while the recorder waits for it",
    registers: [this.registry],
  });
  readonly journalOpenFailures = new Counter({
    name: "krply_journal_open_failures_total",
    help: "Failed attempts to open, migrate or check the journal, by error code",
    labelNames: ["code"] as const,
    registers: [this.registry],
  });
  private readiness: () => boolean = () => false;
  // Evaluated at each scrape from the same answer as the readiness probe (/readyz), so an alert on
  // this gauge and the pod's Ready condition never disagree.
  readonly ready: Gauge = new Gauge({
    name: "krply_recorder_ready",
    help: "1 when the recorder's readiness probe (/readyz) passes: running, every stream baselined and answering, the journal writable; 0 otherwise",
    registers: [this.registry],
    collect: (): void => this.ready.set(this.readiness() ? 1 : 0),
  });
  readonly startFailures = new Counter({
    name: "krply_recorder_start_failures_total",
    help: "Failed recorder start attempts (each is retried with backoff)",
    registers: [this.registry],
  });
  readonly refused = new Gauge({
    name: "krply_journal_refused",
    help: "1 when the journal failed its check and the recorder writes nothing until it is repaired",
    registers: [this.registry],
  });
  readonly requestsWaiting = new Gauge({
    name: "krply_http_requests_waiting",
    help: "Requests to the API server that have waited over 10 s for their answer (a connection, or a slow server)",
    registers: [this.registry],
  });
  readonly fsckRuns = new Counter({
    name: "krply_journal_checks_total",
    help: "Scheduled full checks of the journal, by result (ok, damaged)",
    labelNames: ["result"] as const,
    registers: [this.registry],
  });
  readonly rejected = new Counter({
    name: "krply_records_rejected_total",
    help: "Records the journal refused; each is stored as an ERROR record in its place while the rest of its batch commits",
    labelNames: ["stream"] as const,
    registers: [this.registry],
  });
  readonly appendFailures = new Counter({
    name: "krply_journal_append_failures_total",
    help: "Journal appends that failed and rolled back",
    registers: [this.registry],
  });
  readonly queueDepth = new Gauge({
    name: "krply_ingest_queue_records",
    help: "Records waiting in the bounded ingest queue",
    registers: [this.registry],
  });
  readonly lag = new Histogram({
    name: "krply_ingest_lag_seconds",
    help: "Time from reading an event off the socket to its commit in the journal",
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  /** Names what krply_recorder_ready reports at each scrape: the recorder's readiness verdict. */
  reportReadiness(ready: () => boolean): void {
    this.readiness = ready;
  }
}
