// Audit benchmark: ingest and correlate an audit log against a journal of the same size, against
// the baseline of parsing the same lines with zod only (read, split, JSON.parse, schema).
import { createWriteStream, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AuditIngestor, LogFollower, parseAuditLine } from "../src/audit";
import {
  eventRecord,
  streamIdOf,
  type JournalRecord,
  type KubeObject,
  type StreamKey,
} from "../src/event";
import { openJournal } from "../src/journal";
import { auditLine } from "../test/support/audit-fixtures";
import { numberFlag } from "./lib-flags";

const USERS = [
  "alice",
  "bob",
  "carol",
  "system:serviceaccount:shop:deployer",
  "kube-controller-manager",
];
const NAMESPACES = 20;
const OBJECTS = 10_000;
const DAY_MS = 86_400_000;
const BATCH = 1000;
const MAX_LINE = 4 * 1024 * 1024;

function configMap(
  ns: string,
  name: string,
  uid: string,
  rv: number,
  at: string,
  n: number,
): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name,
      namespace: ns,
      uid,
      resourceVersion: String(rv),
      creationTimestamp: "2026-01-01T00:00:00Z",
      labels: { app: name.slice(0, 12), "app.kubernetes.io/part-of": "shop" },
      managedFields: [
        {
          manager: "kubectl-client-side-apply",
          operation: "Update",
          apiVersion: "v1",
          time: at.replace(/\.\d+Z$/, "Z"),
          fieldsType: "FieldsV1",
          fieldsV1: { "f:data": { ".": {}, "f:config.yaml": {}, "f:revision": {} } },
        },
      ],
    },
    data: {
      "config.yaml": `replicas: 3\nlogLevel: info\nfeature: ${n % 7}\n`,
      revision: String(n),
    },
  };
}

/** Rate in lines per second. */
const rate = (lines: number, ms: number): number => Math.round((lines * 1000) / ms);

/** Runs the benchmark; flags: --lines N (audit lines, and journal events; default 1,000,000). */
export async function main(args: string[]): Promise<void> {
  const n = Math.round(numberFlag(args, "lines", 1_000_000));
  const dir = mkdtempSync(join(tmpdir(), "krply-bench-audit-"));
  const journalPath = join(dir, "journal.db");
  const logPath = join(dir, "audit.log");
  console.log(
    `lines=${n} journal-events=${n} objects=${OBJECTS} namespaces=${NAMESPACES} dir=${dir}`,
  );
  try {
    // The journal: n ConfigMap events over one day; the audit log: one line per event, most the
    // completed write (with request and response bodies), some a RequestReceived stage or a read.
    const t0 = Date.now() - DAY_MS - 3_600_000;
    const step = DAY_MS / n;
    const key: StreamKey = {
      clusterId: "bench",
      group: "",
      version: "v1",
      resource: "configmaps",
      namespace: "",
      selector: "",
    };
    const journal = openJournal(journalPath);
    const out = createWriteStream(logPath);
    let expected = 0;
    let buildStart = Date.now();
    const rvOf = new Map<number, number>();
    let batch: JournalRecord[] = [];
    for (let i = 0; i < n; i++) {
      const o = i % OBJECTS;
      const ns = `ns-${o % NAMESPACES}`;
      const name = `cm-${o}`;
      const rv = 1000 + i;
      const at = new Date(t0 + i * step).toISOString();
      const seen = rvOf.has(o);
      rvOf.set(o, rv);
      const obj = configMap(ns, name, `uid-${o}`, rv, at, i);
      batch.push(
        eventRecord({
          stream: key,
          watchType: seen ? "MODIFIED" : "ADDED",
          object: obj,
          observedAt: at,
        }),
      );
      if (batch.length === BATCH) {
        journal.append({ records: batch, checkpoints: [], streams: [key] });
        batch = [];
      }
      const user = USERS[i % USERS.length];
      const base = {
        auditId: `a-${i}`,
        user,
        userAgent: "kubectl/v1.37.2",
        resource: "configmaps",
        namespace: ns,
        name,
        at,
      };
      const kind = i % 10;
      let line: string;
      if (kind < 8) {
        expected++;
        line = auditLine({
          ...base,
          verb: seen ? "patch" : "create",
          code: seen ? 200 : 201,
          request: { data: obj.data },
          response: obj,
        });
      } else if (kind === 8) {
        // The RequestReceived stage of the previous line's request: it follows it by audit id.
        expected++;
        line = auditLine({
          ...base,
          auditId: `a-${i - 1}`,
          stage: "RequestReceived",
          verb: "patch",
        });
      } else {
        line = auditLine({ ...base, verb: "get", code: 200 });
      }
      if (!out.write(`${line}\n`)) await new Promise<void>(r => out.once("drain", () => r()));
    }
    if (batch.length > 0) journal.append({ records: batch, checkpoints: [], streams: [key] });
    await new Promise<void>((done, fail) =>
      out.end((err?: Error | null) => (err ? fail(err) : done())),
    );
    const logBytes = statSync(logPath).size;
    console.log(
      `built journal (${journal.recordCount()} records) and audit log (${(logBytes / 1e6).toFixed(0)} MB) in ${((Date.now() - buildStart) / 1000).toFixed(1)} s; stream ${streamIdOf(key)}`,
    );

    // Baseline: the same lines read and split the same way, each parsed with JSON.parse and zod.
    let parsed = 0;
    buildStart = Date.now();
    const baseStart = process.hrtime.bigint();
    await new LogFollower(
      logPath,
      lines => {
        for (const l of lines) if (parseAuditLine(l, MAX_LINE).ok) parsed++;
      },
      { maxLineBytes: MAX_LINE, pollMs: 1000, chunkBytes: 4 << 20 },
    ).readOnce();
    const baseMs = Number(process.hrtime.bigint() - baseStart) / 1e6;

    // Measured: parse, correlate (bounded look-ups in the journal) and write the correlations.
    const ingest = new AuditIngestor(journal, { clusterId: "bench", maxLineBytes: MAX_LINE });
    const runStart = process.hrtime.bigint();
    const counts = await ingest.importFile(logPath);
    const runMs = Number(process.hrtime.bigint() - runStart) / 1e6;
    journal.close();

    const baseRate = rate(n, baseMs);
    const runRate = rate(n, runMs);
    console.log(
      `zod parse only:      ${baseRate} lines/s (${(baseMs / 1000).toFixed(1)} s, ${parsed} valid)`,
    );
    console.log(`ingest + correlate:  ${runRate} lines/s (${(runMs / 1000).toFixed(1)} s)`);
    console.log(
      `matched ${counts.matched} of ${expected} expected, written ${counts.written}, ignored ${counts.ignored}, unmatched ${counts.unmatched}, malformed ${counts.malformed}`,
    );
    console.log(
      `ratio ingest+correlate / zod parse: ${(runRate / baseRate).toFixed(2)} (target >= 0.5)`,
    );
    if (counts.matched !== expected)
      throw new Error(`matched ${counts.matched}, expected ${expected}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
