// Journal benchmark: append throughput against raw better-sqlite3 INSERTs of the same JSON (with the
// journal's own page size and page cache, so only the journal's work differs), bytes on disk against
// the same JSON rows plain and deflated (so the figure shows what the delta codec adds over plain
// compression), last-version cache hit rate, read latency and peak RSS. Every random choice is seeded.
// A second journal with the writer's tier of keyframe bodies off appends the same batches, so the
// run also shows the append ratio where that tier cannot help.
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { deflateRawSync } from "node:zlib";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import type { JournalRecord } from "../src/event";
import { CONNECTION_DEFAULTS, openJournal, openJournalView, type Journal } from "../src/journal";
import { checkpointsOf } from "../test/support/journal-fixtures";
import { rng, Workload } from "./lib-kube-workload";
import { numberFlag } from "./lib-flags";

const BATCH = 500;
/** Batches each side appends per turn. */
const BLOCK = 8;
/** Batches the pipelined journal keeps in flight, as the recorder's sink does. */
const DEPTH = 2;

function fileBytes(path: string): number {
  return [path, `${path}-wal`].filter(existsSync).reduce((n, p) => n + statSync(p).size, 0);
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function ms(ns: bigint): number {
  return Number(ns) / 1e6;
}

/** "MET" or "not met", then the target, as every bench with a target prints it. */
const verdict = (ok: boolean, target: string): string => `${ok ? "MET" : "not met"}: ${target}`;

function cpuSince(start: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(start);
  return d.user + d.system;
}

/**
 * Runs the benchmark; flags: --events N (write phase), --read-events N (reads), --objects N, --cache N,
 * --bodies-mib N (the tier of keyframe bodies; default the journal's own).
 */
export async function main(args: string[]): Promise<void> {
  const events = numberFlag(args, "events", 200_000);
  const readEvents = Math.max(events, numberFlag(args, "read-events", 1_000_000));
  const objects = numberFlag(args, "objects", 5000);
  const cacheSize = numberFlag(args, "cache", 4096);
  // Absent: the journal's default budget, which the cache line prints.
  const bodiesMiB = args.includes("--bodies-mib")
    ? numberFlag(args, "bodies-mib", 0, { zeroOk: true })
    : undefined;
  const dir = mkdtempSync(join(tmpdir(), "krply-bench-"));
  console.log(
    `events=${events} read-events=${readEvents} objects=${objects} batch=${BATCH} cache=${cacheSize} bodies-mib=${bodiesMiB ?? "default"} dir=${dir}`,
  );
  try {
    // Raw baselines: the journal's pragmas (WAL, synchronous=FULL, page size, page cache), one JSON
    // row per event; the second stores each row deflated, as a store that only compresses would.
    const rawTable = (file: string, deflate: boolean) => {
      const db = new Database(join(dir, file));
      // page_size applies to a new file only, so it comes before WAL mode creates the file's header.
      db.pragma(`page_size = ${CONNECTION_DEFAULTS.pageSize}`);
      db.pragma("journal_mode = WAL");
      db.pragma("synchronous = FULL");
      db.pragma(`cache_size = -${CONNECTION_DEFAULTS.pageCacheKiB}`);
      db.exec("CREATE TABLE raw (id INTEGER PRIMARY KEY, json BLOB NOT NULL)");
      const ins = db.prepare("INSERT INTO raw (json) VALUES (?)");
      const txn = db.transaction((recs: JournalRecord[]) => {
        let bytes = 0;
        for (const r of recs) {
          const json = JSON.stringify(r);
          bytes += Buffer.byteLength(json);
          ins.run(deflate ? deflateRawSync(json) : json);
        }
        return bytes;
      });
      return { db, path: join(dir, file), txn };
    };
    const raw = rawTable("raw.db", false);
    const rawz = rawTable("raw-deflate.db", true);
    const rawPath = raw.path;
    const rawTxn = raw.txn;

    const jPath = join(dir, "journal.db");
    // The journal as the recorder runs it: appendAsync with the writer thread, so the next batch is
    // planned here while the last one commits there.
    const j = openJournal(jPath, {
      lastVersionCacheSize: cacheSize,
      keyframeBodyCacheBytes: bodiesMiB === undefined ? undefined : bodiesMiB * 2 ** 20,
      writerThread: true,
    });
    // The same journal with every append on this thread (append, no writer thread), and that one
    // without the tier of keyframe bodies: what each of the two adds.
    const jInline = openJournal(join(dir, "journal-inline.db"), {
      lastVersionCacheSize: cacheSize,
      keyframeBodyCacheBytes: bodiesMiB === undefined ? undefined : bodiesMiB * 2 ** 20,
    });
    const jOff = openJournal(join(dir, "journal-tier-off.db"), {
      lastVersionCacheSize: cacheSize,
      keyframeBodyCacheBytes: 0,
    });

    // The sides take turns block by block (BLOCK batches each), in a rotating order, so machine
    // noise hits all alike and none always meets another's dirty caches and WAL checkpoints. A block
    // rather than a batch, because the pipelined journal only shows its rate over several batches:
    // its block is timed from the first submit until the last batch is durable.
    const w = new Workload(objects);
    let rawNs = 0n;
    let rawzNs = 0n;
    // CPU time (all threads of the process) beside wall time: on a busy machine the side that does
    // more CPU work per event is stretched more, so the wall ratio there falls toward the CPU ratio.
    let rawCpuUs = 0;
    const jt = { ns: 0n, cpuUs: 0 };
    const inl = { ns: 0n, cpuUs: 0 };
    const offt = { ns: 0n, cpuUs: 0 };
    let rawBytes = 0;
    let blockNo = 0;
    for (let done = 0; done < events; done += BATCH * BLOCK) {
      const block: JournalRecord[][] = [];
      for (let d = done; d < Math.min(events, done + BATCH * BLOCK); d += BATCH)
        block.push(w.next(Math.min(BATCH, events - d)));
      const timed = async (t: { ns: bigint; cpuUs: number }, run: () => Promise<void> | void) => {
        const c0 = process.cpuUsage();
        const t0 = process.hrtime.bigint();
        await run();
        t.ns += process.hrtime.bigint() - t0;
        t.cpuUs += cpuSince(c0);
      };
      const runRaw = async () => {
        const r = { ns: 0n, cpuUs: 0 };
        await timed(r, () => {
          for (const recs of block) rawBytes += rawTxn(recs);
        });
        rawNs += r.ns;
        rawCpuUs += r.cpuUs;
        const t1 = process.hrtime.bigint();
        for (const recs of block) rawz.txn(recs);
        rawzNs += process.hrtime.bigint() - t1;
      };
      const runSync = (journal: Journal, t: { ns: bigint; cpuUs: number }) => () =>
        timed(t, () => {
          for (const recs of block)
            journal.append({ records: recs, checkpoints: checkpointsOf(recs) });
        });
      const runPipelined = () =>
        timed(jt, async () => {
          const inFlight: Promise<unknown>[] = [];
          for (const recs of block) {
            inFlight.push(j.appendAsync({ records: recs, checkpoints: checkpointsOf(recs) }));
            if (inFlight.length > DEPTH) await inFlight[inFlight.length - 1 - DEPTH];
          }
          await Promise.all(inFlight);
        });
      const sides = [runRaw, runPipelined, runSync(jInline, inl), runSync(jOff, offt)];
      const k = blockNo++ % sides.length;
      for (const run of [...sides.slice(k), ...sides.slice(0, k)]) await run();
    }
    const rawRate = events / (ms(rawNs) / 1000);
    const rawzRate = events / (ms(rawzNs) / 1000);
    const jRate = events / (ms(jt.ns) / 1000);
    const offRate = events / (ms(offt.ns) / 1000);
    const inlRate = events / (ms(inl.ns) / 1000);
    raw.db.pragma("wal_checkpoint(TRUNCATE)");
    rawz.db.pragma("wal_checkpoint(TRUNCATE)");
    j.checkpointWal();
    const jBytes = fileBytes(jPath);
    const rawDisk = fileBytes(rawPath);
    const rawzDisk = fileBytes(rawz.path);
    raw.db.close();
    rawz.db.close();
    console.log(
      `append: journal ${jRate.toFixed(0)} ev/s, raw INSERT ${rawRate.toFixed(0)} ev/s, ratio ${(jRate / rawRate).toFixed(2)} ` +
        `(${verdict(jRate / rawRate >= 0.8, ">= 0.8")}; matched page size and cache; appendAsync on the writer thread, ${DEPTH} batches in flight)`,
    );
    console.log(
      `append CPU per event: journal ${(jt.cpuUs / events).toFixed(1)} µs, raw INSERT ${(rawCpuUs / events).toFixed(1)} µs, ` +
        `ratio ${(rawCpuUs / jt.cpuUs).toFixed(2)}; wall per event: journal ${((ms(jt.ns) * 1000) / events).toFixed(1)} µs, raw ${((ms(rawNs) * 1000) / events).toFixed(1)} µs`,
    );
    console.log(
      `append on this thread only (no writer thread: what a recorder of a small cluster runs): journal ${inlRate.toFixed(0)} ev/s, ` +
        `ratio ${(inlRate / rawRate).toFixed(2)} (${verdict(inlRate / rawRate >= 0.8, ">= 0.8")}); ` +
        `CPU per event ${(inl.cpuUs / events).toFixed(1)} µs, wall ${((ms(inl.ns) * 1000) / events).toFixed(1)} µs`,
    );
    console.log(
      `append with the keyframe-body tier off (on this thread only): journal ${offRate.toFixed(0)} ev/s, ratio ${(offRate / rawRate).toFixed(2)}; ` +
        `CPU per event ${(offt.cpuUs / events).toFixed(1)} µs, wall ${((ms(offt.ns) * 1000) / events).toFixed(1)} µs`,
    );
    console.log(
      `append vs raw deflated INSERT ${rawzRate.toFixed(0)} ev/s: ratio ${(jRate / rawzRate).toFixed(2)}`,
    );
    console.log(
      `size: journal ${jBytes} B (${(jBytes / events).toFixed(1)} B/event), raw JSON ${rawBytes} B (${(rawBytes / events).toFixed(0)} B/event), ` +
        `ratio ${(jBytes / rawBytes).toFixed(3)} (${verdict(jBytes / rawBytes <= 0.15, "<= 0.15")}); raw table on disk ${rawDisk} B`,
    );
    console.log(
      `size vs the same rows deflated on disk (${rawzDisk} B, ${(rawzDisk / events).toFixed(1)} B/event): ratio ${(jBytes / rawzDisk).toFixed(3)} (what the delta codec adds)`,
    );
    const st = j.stats();
    const kb = st.keyframeBodies;
    console.log(
      `cache: ${cacheSize} entries for ${objects} objects, hit rate ${((100 * st.cacheHits) / Math.max(1, st.cacheHits + st.cacheMisses)).toFixed(1)}% ` +
        `(${st.cacheMisses} misses: ${kb.hits} decoded from the keyframe-body tier (${kb.entries} entries, ` +
        `${(kb.bytes / 2 ** 20).toFixed(1)} of ${(kb.budgetBytes / 2 ** 20).toFixed(1)} MiB), ${st.cacheMisses - kb.hits} read back from the journal)`,
    );
    jOff.close();
    jInline.close();

    // Grow to the read size, then sample reads.
    const t0 = process.hrtime.bigint();
    for (let done = events; done < readEvents; done += BATCH) {
      const recs = w.next(Math.min(BATCH, readEvents - done));
      j.append({ records: recs, checkpoints: checkpointsOf(recs) });
    }
    if (readEvents > events) {
      j.checkpointWal();
      console.log(
        `grew journal to ${readEvents} events in ${(ms(process.hrtime.bigint() - t0) / 1000).toFixed(1)} s; ${fileBytes(jPath)} B on disk`,
      );
    }
    // Reads go through a read-only view next to the open writer, as the planned query sidecar reads.
    const reader = openJournalView(jPath);
    const start = Date.UTC(2024, 0, 1);
    const pick = rng(1234);
    const atNs: number[] = [];
    const histNs: number[] = [];
    const histLen: number[] = [];
    const evNs: number[] = [];
    for (let i = 0; i < 2000; i++) {
      const s = w.sample();
      const sel = { clusterId: "bench", kind: s.kind, namespace: s.ns, name: s.name };
      const time = new Date(start + pick() * (w.now - start)).toISOString();
      let t = process.hrtime.bigint();
      reader.objectAt(sel, { time });
      atNs.push(ms(process.hrtime.bigint() - t));
      if (i % 4 === 0) {
        t = process.hrtime.bigint();
        histLen.push(reader.objectHistory(sel).length);
        histNs.push(ms(process.hrtime.bigint() - t));
        // The first page of one object's records, as a timeline view asks for it.
        t = process.hrtime.bigint();
        reader.events({ kind: s.kind, namespace: s.ns, name: s.name, limit: 100 });
        evNs.push(ms(process.hrtime.bigint() - t));
      }
    }
    atNs.sort((a, b) => a - b);
    histNs.sort((a, b) => a - b);
    histLen.sort((a, b) => a - b);
    evNs.sort((a, b) => a - b);
    console.log(
      `objectAt on ${readEvents} events: p50 ${pct(atNs, 50).toFixed(2)} ms, p99 ${pct(atNs, 99).toFixed(2)} ms (${verdict(pct(atNs, 50) < 2, "p50 < 2 ms")})`,
    );
    console.log(
      `objectHistory on ${readEvents} events: p50 ${pct(histNs, 50).toFixed(2)} ms, p99 ${pct(histNs, 99).toFixed(2)} ms ` +
        `(versions p50 ${pct(histLen, 50)}, p99 ${pct(histLen, 99)}; ${verdict(pct(histNs, 50) < 5, "p50 < 5 ms")})`,
    );
    console.log(
      `events by kind/namespace/name on ${readEvents} events (first 100): p50 ${pct(evNs, 50).toFixed(2)} ms, p99 ${pct(evNs, 99).toFixed(2)} ms`,
    );
    reader.close();
    j.close();
    console.log(`peak RSS: ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
