import {
  baselineRecords,
  checkpointRecord,
  coverageRecord,
  eventRecord,
  gapRecord,
  streamIdOf,
} from "../event";
import type { JournalRecord, KubeObject } from "../event";
import {
  ApiError,
  apiErrorFromStatus,
  NetworkError,
  toNetworkError,
  type Status,
} from "../kube/errors";
import { randomTimeoutSeconds } from "./backoff";
import {
  attemptFor,
  classify,
  countFailure,
  decide,
  MalformedLineError,
  SinkError,
  StalledError,
  type Attempts,
  type Failure,
} from "./decide";
import { LineSplitter } from "./line-splitter";
import { parseListPage, parseWatchLine } from "./parse";
import type { SinkItem, SinkOwner } from "./sink";
import { apiVersionOf, withTypeMeta } from "./type-meta";
import type { EngineContext, ResumePoint, StreamPhase, StreamSpec, StreamStatus } from "./types";

const iso = (): string => new Date().toISOString();

/** The state machine of one stream: list, baseline, watch, and recover from every kind of failure. */
export class StreamRunner implements SinkOwner {
  readonly streamId: string;
  epoch = 0;
  private phase: StreamPhase = "starting";
  private durableRv: string | null;
  private needList: boolean;
  private coverage: StreamStatus["coverage"];
  private stopped = false;
  private abort: AbortController | null = null;
  private sinkFailure: SinkError | null = null;
  private wake: (() => void) | null = null;
  private healthy = false;
  private connection = 0;
  private done: Promise<void> | null = null;
  private stats = { events: 0, reconnects: 0, gaps: 0, malformed: 0, lagMs: 0 };
  private readonly downSince: string | null;
  private lastEventAt: string | null = null;
  private lastError: string | null = null;

  constructor(
    readonly spec: StreamSpec,
    private readonly ctx: EngineContext,
    resume: ResumePoint,
  ) {
    this.streamId = streamIdOf(spec.key);
    this.key = spec.key;
    this.apiVersion = apiVersionOf(spec.key);
    this.durableRv = resume.rv;
    this.needList = resume.needList || resume.rv === null;
    this.coverage = resume.coverage;
    this.downSince = resume.downSince ?? null;
  }
  readonly key;
  private readonly apiVersion: string;

  /**
   * Starts the loop; resolves when the stream has stopped. `announce` says why the stream (re)starts
   * (a CRD established); a stream that resumes from its checkpoint after the recorder was down
   * writes the down window first, so answers about it can say that its changes were observed late.
   */
  start(announce?: string): Promise<void> {
    this.done ??= this.begin(announce);
    return this.done;
  }

  private async begin(announce?: string): Promise<void> {
    // A stream the journal calls stopped says that it records again, even with nothing to be late.
    if (announce || this.downSince || this.coverage === "stopped") {
      const reason =
        announce ?? (this.downSince ? "recorder resumed from its checkpoint" : "recording resumed");
      await this.writeCoverage("available", reason, undefined, this.downSince ?? undefined);
      await this.ctx.sink.settled(this.streamId);
    }
    await this.run();
  }

  /**
   * Stops the stream and waits until its queued records are settled. With a reason it writes a
   * coverage change (stopped), so answers after it call the stream stale instead of complete. A
   * stream that was watching until now also renews its checkpoint in the same commit: continuity
   * is proven up to the stop, and a later resume's down window starts there.
   */
  async stop(reason?: string): Promise<void> {
    const live = this.phase === "watching";
    this.stopped = true;
    this.abort?.abort(new Error("stream stopped"));
    this.wake?.();
    await this.done;
    await this.ctx.sink.settled(this.streamId);
    if (reason) {
      const rec = coverageRecord({ stream: this.key, state: "stopped", reason, observedAt: iso() });
      this.sinkFailure = null;
      await this.push([rec], live && this.durableRv !== null ? this.durableRv : undefined);
      await this.ctx.sink.settled(this.streamId);
      if (this.sinkFailure) {
        this.ctx.log.error(
          { stream: this.streamId, err: this.sinkFailure },
          "could not record that the stream stopped",
        );
      } else {
        this.coverage = "stopped";
        this.ctx.metrics.coverage.inc({ stream: this.streamId, state: "stopped" });
      }
    }
    this.phase = "stopped";
  }

  /** Drops the current connection; the stream resumes from its durable RV like after any disconnect. */
  interrupt(): void {
    this.abort?.abort(new NetworkError("connection dropped on request", "INTERRUPTED"));
  }

  status(): StreamStatus {
    return {
      streamId: this.streamId,
      key: this.key,
      phase: this.phase,
      durableRv: this.durableRv,
      baselined: !this.needList && this.durableRv !== null,
      coverage: this.coverage,
      lastEventAt: this.lastEventAt,
      lagMs: this.stats.lagMs,
      events: this.stats.events,
      reconnects: this.stats.reconnects,
      gaps: this.stats.gaps,
      malformed: this.stats.malformed,
      lastError: this.lastError,
    };
  }

  committed(item: SinkItem, committedAt: number): void {
    if (item.checkpointRv !== undefined) this.durableRv = item.checkpointRv;
    this.stats.lagMs = committedAt - item.receivedAt;
    this.ctx.metrics.lag.observe(this.stats.lagMs / 1000);
    for (const r of item.records) {
      if (r.type === "event") {
        this.stats.events++;
        this.lastEventAt = r.observedAt;
      }
    }
  }

  failed(err: SinkError): void {
    // Everything queued after the failed batch belongs to a connection we are about to drop.
    this.epoch++;
    this.sinkFailure ??= err;
    this.abort?.abort(err);
  }

  private async run(): Promise<void> {
    let attempts: Attempts = { failures: 0, denials: 0 };
    while (!this.stopped) {
      this.healthy = false;
      let failure = await this.cycle();
      if (this.stopped) break;
      await this.ctx.sink.settled(this.streamId);
      if (this.sinkFailure) {
        failure = classify(this.sinkFailure);
        this.sinkFailure = null;
      }
      if (this.healthy) attempts = { failures: 0, denials: 0 };
      const action = decide(
        failure,
        attemptFor(failure, attempts),
        {
          backoff: { minMs: this.ctx.options.backoffMinMs, maxMs: this.ctx.options.backoffMaxMs },
          slowRetryMs: this.ctx.options.slowRetryMs,
        },
        this.ctx.random,
      );
      attempts = countFailure(failure, attempts);
      if (failure.kind !== "closed") {
        this.lastError = `${failure.kind}: ${failure.message}`;
        this.ctx.log.warn({ stream: this.streamId, failure, action }, "stream interrupted");
      }
      this.stats.reconnects++;
      this.ctx.metrics.reconnects.inc({ stream: this.streamId, kind: failure.kind });
      if (action.do === "relist") {
        await this.recordGap(action.gapReason);
        continue;
      }
      if (action.do === "unavailable") {
        this.phase = "unavailable";
        if (this.coverage !== "unavailable") {
          await this.writeCoverage("unavailable", action.reason, action.status);
        }
      } else if (action.delayMs > 0) {
        this.phase = "backoff";
      }
      await this.sleep(action.delayMs);
    }
  }

  private async cycle(): Promise<Failure> {
    try {
      if (this.needList || this.durableRv === null) await this.listAndBaseline();
      const opened = Date.now();
      await this.watch(this.durableRv!);
      // A watch that ends at once with nothing in it is a failure, or we would spin.
      if (!this.healthy && Date.now() - opened < 1000) {
        return { kind: "network", message: "watch closed immediately without data" };
      }
      return { kind: "closed", message: "server ended the watch" };
    } catch (err) {
      return classify(err);
    }
  }

  /** Queues records; a promise only when the sink is full (JournalSink.push). */
  private push(
    records: JournalRecord[],
    checkpointRv?: string,
    receivedAt = Date.now(),
  ): Promise<void> | undefined {
    return this.ctx.sink.push({
      owner: this,
      epoch: this.epoch,
      records,
      checkpointRv,
      receivedAt,
    });
  }

  private async recordGap(reason: string): Promise<void> {
    const rec = gapRecord({
      stream: this.key,
      lastGoodResourceVersion: this.durableRv ?? "",
      reason,
      detectedAt: iso(),
    });
    await this.push([rec]);
    await this.ctx.sink.settled(this.streamId);
    if (this.sinkFailure) return; // not durable: the next cycle meets the 410 again
    this.stats.gaps++;
    this.ctx.metrics.gaps.inc({ stream: this.streamId });
    this.needList = true;
  }

  private async writeCoverage(
    state: "available" | "unavailable",
    reason: string,
    status?: number,
    downSince?: string,
  ) {
    const rec = coverageRecord({
      stream: this.key,
      state,
      reason,
      observedAt: iso(),
      httpStatus: status,
      downSince,
    });
    await this.push([rec]);
    this.coverage = state;
    this.ctx.metrics.coverage.inc({ stream: this.streamId, state });
  }

  /** Called when the server answers 2xx: access (back) in place. */
  private async markAvailable(): Promise<void> {
    if (this.coverage === "unavailable") await this.writeCoverage("available", "access restored");
    else this.coverage = "available";
  }

  private async listAndBaseline(): Promise<void> {
    this.phase = "listing";
    const { client, options } = this.ctx;
    const labelSelector = this.key.selector || undefined;
    for (;;) {
      const ac = new AbortController();
      this.abort = ac;
      const listedAt = iso();
      let cont = "";
      let listRv = "";
      let count = 0;
      let expired = false;
      do {
        let raw: unknown;
        try {
          raw = await client.json(this.spec.path, {
            query: { limit: options.pageSize, continue: cont || undefined, labelSelector },
            signal: ac.signal,
          });
        } catch (err) {
          if (err instanceof ApiError && err.status === 410 && cont !== "") {
            // The continue token outlived etcd's window; the list must start over.
            this.ctx.log.warn({ stream: this.streamId }, "continue token expired; relisting");
            expired = true;
            break;
          }
          throw err;
        }
        const page = parseListPage(raw);
        await this.markAvailable();
        listRv ||= page.resourceVersion;
        cont = page.continueToken;
        count += page.items.length;
        const recs = baselineRecords({
          stream: this.key,
          listResourceVersion: listRv,
          listedAt,
          objects: page.items.map(o => withTypeMeta(o, this.apiVersion, this.spec.kind)),
          kind: this.spec.kind,
        });
        recs.pop(); // the completion marker is written once, after the last page
        if (recs.length > 0) await this.push(recs);
        if (this.sinkFailure) throw this.sinkFailure;
        this.ctx.trimmer?.listed(client.bytesRead);
      } while (cont !== "");
      if (expired) continue;
      const [marker] = baselineRecords({
        stream: this.key,
        listResourceVersion: listRv,
        listedAt,
        objects: [],
        kind: this.spec.kind,
      });
      marker.baseline!.objectCount = count;
      await this.push([marker], listRv);
      await this.ctx.sink.settled(this.streamId);
      if (this.sinkFailure) throw this.sinkFailure;
      this.needList = false;
      return;
    }
  }

  private async watch(fromRv: string): Promise<void> {
    const { client, options } = this.ctx;
    const ac = new AbortController();
    this.abort = ac;
    if (this.stopped) return;
    const timeoutSeconds = randomTimeoutSeconds(
      options.watchTimeoutMinS,
      options.watchTimeoutMaxS,
      this.ctx.random,
    );
    const res = await client.stream(
      this.spec.path,
      {
        watch: "true",
        resourceVersion: fromRv,
        allowWatchBookmarks: "true",
        timeoutSeconds,
        labelSelector: this.key.selector || undefined,
      },
      ac.signal,
    );
    this.phase = "watching";
    this.connection++;
    await this.markAvailable();
    const splitter = new LineSplitter();
    let timer: NodeJS.Timeout | undefined;
    const arm = (): void => {
      clearTimeout(timer);
      timer = setTimeout(
        () => ac.abort(new StalledError(`no data for ${options.silenceMs} ms`)),
        options.silenceMs,
      );
    };
    arm();
    try {
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        clearTimeout(timer); // our own backpressure must not count as silence
        const receivedAt = Date.now();
        for (const line of splitter.push(chunk)) {
          // Most lines find room in the sink: no promise to await, no turn of the loop per event.
          const full = this.handleLine(line, receivedAt);
          if (full) await full;
          if (this.sinkFailure) throw this.sinkFailure;
        }
        arm();
      }
    } catch (err) {
      const reason: unknown = ac.signal.reason;
      if (ac.signal.aborted && reason instanceof Error) throw reason;
      if (err instanceof MalformedLineError || err instanceof ApiError) throw err;
      if (err instanceof SinkError) throw err;
      throw toNetworkError(err, `watch ${this.spec.path}`);
    } finally {
      clearTimeout(timer);
      res.body.destroy();
    }
    if (splitter.pending > 0) {
      throw new NetworkError(`watch ended inside an event (${splitter.pending} bytes cut)`, "CUT");
    }
  }

  /** Queues what one line says; throws when it ends the watch; a promise only when the sink is full. */
  private handleLine(line: string, receivedAt: number): Promise<void> | undefined {
    const p = parseWatchLine(line);
    switch (p.type) {
      case "malformed":
        this.stats.malformed++;
        this.ctx.metrics.malformed.inc({ stream: this.streamId });
        throw new MalformedLineError(`malformed watch line: ${p.error}`, Buffer.byteLength(line));
      case "ERROR":
        return this.watchError(p.status, receivedAt);
      case "BOOKMARK":
        this.healthy = true;
        return this.push(
          [
            checkpointRecord({
              stream: this.key,
              resourceVersion: p.resourceVersion,
              observedAt: iso(),
              bookmark: true,
            }),
          ],
          p.resourceVersion,
          receivedAt,
        );
      default: {
        this.healthy = true;
        const rec = eventRecord({
          stream: this.key,
          watchType: p.type,
          object: withTypeMeta(p.object, this.apiVersion, this.spec.kind),
          observedAt: new Date(receivedAt).toISOString(),
          kind: this.spec.kind,
        });
        return this.push([rec], p.resourceVersion, receivedAt);
      }
    }
  }

  private async watchError(status: Status, receivedAt: number): Promise<void> {
    const err = apiErrorFromStatus(status, `watch ${this.spec.path}`);
    this.ctx.metrics.watchErrors.inc({ stream: this.streamId, code: String(err.status) });
    // A 410 becomes a GAP. Any other ERROR ends the watch mid-stream for a reason the server
    // chose; the reconnect resumes from the durable RV, but the journal keeps the server's own
    // words at their place in the stream, so a reader can see where continuity was questioned.
    if (classify(err).kind !== "gone") {
      const rec = eventRecord({
        stream: this.key,
        watchType: "ERROR",
        object: { ...status, metadata: {} } as KubeObject,
        observedAt: new Date(receivedAt).toISOString(),
      });
      await this.push([rec], undefined, receivedAt);
    }
    throw err;
  }

  private sleep(ms: number): Promise<void> {
    if (ms <= 0 || this.stopped) return Promise.resolve();
    return new Promise(resolve => {
      const t = setTimeout(done, ms);
      function done(): void {
        clearTimeout(t);
        resolve();
      }
      this.wake = done;
    });
  }
}
