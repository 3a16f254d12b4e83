import { statfsSync } from "node:fs";
import { dirname, join } from "node:path";
import { loadConfig } from "../config";
import { eventRecord, streamIdOf, type JournalRecord } from "../event";
import { openJournal } from "../journal";
import { at, deployment, streamKey, tempJournalPath } from "../../test/support/journal-fixtures";
import { journalOptionsOf, recorderConfigOf } from "./recorder";

const stream = streamKey("deployments", "apps", "v1", "shop");

function batch(from: number, n: number): JournalRecord[] {
  return Array.from({ length: n }, (_, i) => {
    const rv = from + i;
    const o = deployment(`d${rv % 40}`, "shop", `u${rv % 40}`, rv, rv % 4);
    o.metadata.annotations = { churn: `${rv}`.repeat(40) };
    return eventRecord({ stream, watchType: "MODIFIED", object: o, observedAt: at(rv) });
  });
}

describe("the recorder's journal follows the configuration", () => {
  it("prunes at the configured byte budget and writes the pruned record", () => {
    const tmp = tempJournalPath();
    const config = loadConfig({ KRPLY_JOURNAL: tmp.path, KRPLY_RETENTION_BYTES: "1Mi" });
    const j = openJournal(tmp.path, recorderConfigOf(config).journal);
    try {
      let rv = 1;
      let maxSize = 0;
      for (let b = 0; b < 100; b++) {
        j.append({
          records: batch(rv, 100),
          checkpoints: [
            { streamId: streamIdOf(stream), resourceVersion: String(rv + 99), observedAt: at(rv) },
          ],
        });
        rv += 100;
        maxSize = Math.max(maxSize, j.sizeBytes());
      }
      expect(maxSize).toBeLessThanOrEqual(1.1 * 2 ** 20);
      expect(j.events({ types: ["pruned"] }).records.length).toBeGreaterThan(0);
    } finally {
      j.close();
      tmp.cleanup();
    }
  });

  it("passes a share of the volume, the age limit and the redaction settings", () => {
    const opts = journalOptionsOf(
      loadConfig({
        KRPLY_RETENTION_BYTES: "50%",
        KRPLY_RETENTION_MAX_AGE: "12h",
        KRPLY_REDACT_KINDS: "Credential",
        KRPLY_REDACT_KEY_FILE: "/etc/krply/key",
      }),
    );
    expect(opts.retention).toEqual({ volumePercent: 50, maxAgeMs: 12 * 3_600_000 });
    expect(opts.redact).toMatchObject({ kinds: ["Credential"], keyFile: "/etc/krply/key" });
    // The share is measured on the journal's volume when it opens.
    const tmp = tempJournalPath();
    try {
      const j = openJournal(tmp.path, { retention: { volumePercent: 50 } });
      const fs = statfsSync(dirname(tmp.path));
      expect(j.stats().budgetBytes).toBe(Math.floor((fs.blocks * fs.bsize * 50) / 100));
      j.close();
    } finally {
      tmp.cleanup();
    }
  });
});

describe("the recorder's journal starts its writer thread from the configured script", () => {
  const appendOne = (j: ReturnType<typeof openJournal>, rv: number) =>
    j.appendAsync({
      records: batch(rv, 1),
      checkpoints: [
        { streamId: streamIdOf(stream), resourceVersion: String(rv), observedAt: at(rv) },
      ],
    });

  it("runs the thread from KRPLY_WRITER_SCRIPT", async () => {
    const tmp = tempJournalPath();
    // The script as the sources hold it (the image names its bundle's copy the same way).
    const script = join(__dirname, "..", "journal", "write", "writer-worker.ts");
    const config = loadConfig({ KRPLY_JOURNAL: tmp.path, KRPLY_WRITER_SCRIPT: script });
    const j = openJournal(tmp.path, recorderConfigOf(config).journal);
    try {
      expect(j.writerThreadStatus()).toEqual({ state: "off" });
      j.enableWriterThread();
      expect(j.writerThreadStatus()).toEqual({ state: "pending" });
      await appendOne(j, 1);
      expect(j.writerThreadStatus()).toEqual({ state: "running" });
      expect(j.events({}).records).toHaveLength(1);
    } finally {
      j.close();
      tmp.cleanup();
    }
  });

  it("says why when the script is missing, and appends on the main thread instead", async () => {
    const tmp = tempJournalPath();
    const script = join(dirname(tmp.path), "no-such-writer-worker.js");
    const config = loadConfig({ KRPLY_JOURNAL: tmp.path, KRPLY_WRITER_SCRIPT: script });
    const j = openJournal(tmp.path, recorderConfigOf(config).journal);
    try {
      j.enableWriterThread();
      await appendOne(j, 1);
      await appendOne(j, 2);
      const status = j.writerThreadStatus();
      expect(status).toEqual({ state: "failed", reason: expect.stringContaining(script) });
      expect(j.events({}).records).toHaveLength(2);
    } finally {
      j.close();
      tmp.cleanup();
    }
  });
});
