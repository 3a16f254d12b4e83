// Shared by the writer thread's tests: a real journal file, read back with a connection of their own.
import Database from "better-sqlite3";
import { eventRecord, streamIdOf } from "../../src/event";
import { at, deployment, streamKey, tempJournalPath } from "./journal-fixtures";
import {
  openJournal,
  WriterThread,
  WriterThreadError,
  type Journal,
  type TxnBuilder,
  type TxnExpect,
  type WriterThreadOptions,
} from "../../src/journal";

const deploys = streamKey("deployments", "apps", "v1", "shop");
export const cmStream = streamIdOf(streamKey("configmaps", "", "v1", "kube-system"));
export const ev = (rv: number, uid = "u1") =>
  eventRecord({
    stream: deploys,
    watchType: rv === 1 ? "ADDED" : "MODIFIED",
    object: deployment("web", "shop", uid, rv, rv % 3),
    observedAt: at(rv),
  });

/** What the file holds now, read the way the writer thread checks it. */
export function fileState(path: string): TxnExpect {
  const db = new Database(path, { readonly: true });
  try {
    const one = (sql: string) => db.prepare(sql).pluck().get() as number | string | null;
    return {
      lastSeq: Math.max(
        Number(one("SELECT max(seq) FROM records") ?? 0),
        Number(one("SELECT value FROM meta WHERE key='last_seq'") ?? 0),
      ),
      maxObjectId: Number(one("SELECT max(id) FROM objects") ?? 0),
      maxStreamId: Number(one("SELECT max(id) FROM streams") ?? 0),
    };
  } finally {
    db.close();
  }
}

/** Every records row after seq, as SQLite returns it (blobs as Buffers). */
export function rowsAfter(path: string, seq: number): Record<string, unknown>[] {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare("SELECT * FROM records WHERE seq > ? ORDER BY seq").all(seq) as Record<
      string,
      unknown
    >[];
  } finally {
    db.close();
  }
}

/** A transaction of n object rows of `bodyBytes` each, on the file's first stream and object. */
export function rowsTxn(
  b: TxnBuilder,
  expect: TxnExpect,
  n: number,
  bodyBytes = 64,
  tag = "r",
): ArrayBuffer {
  b.reset(expect);
  for (let i = 1; i <= n; i++) {
    const seq = expect.lastSeq + i;
    b.record(
      seq,
      `${tag}-${seq}`,
      1,
      1,
      1,
      1_000 + seq,
      1,
      String(seq),
      0,
      null,
      null,
      Buffer.alloc(bodyBytes, i & 0xff),
      null,
    );
  }
  b.lastSeq(String(expect.lastSeq + n));
  return b.finish();
}

/** The outcome of a submit: "committed" or the error's code. */
export const codeOf = async (p: Promise<unknown>): Promise<string> => {
  try {
    await p;
    return "committed";
  } catch (err) {
    return err instanceof WriterThreadError ? err.code : `not a WriterThreadError: ${String(err)}`;
  }
};

/**
 * Per test: a journal file that openJournal created, holding one stream and one object, and open
 * as `j`; `start` starts writer threads on it, which are closed after the test.
 */
export function useJournalFile() {
  let tmp: ReturnType<typeof tempJournalPath>;
  const threads: WriterThread[] = [];
  const f = {
    path: "",
    dir: "",
    j: null as unknown as Journal,
    start(opts: Omit<WriterThreadOptions, "path"> = {}): WriterThread {
      const wt = WriterThread.start({ path: f.path, ...opts });
      threads.push(wt);
      return wt;
    },
  };
  beforeEach(() => {
    tmp = tempJournalPath();
    f.path = tmp.path;
    f.dir = tmp.dir;
    f.j = openJournal(tmp.path);
    f.j.append({ records: [ev(1), ev(2)], checkpoints: [] });
  });
  afterEach(async () => {
    for (const wt of threads.splice(0)) await wt.close();
    f.j.close();
    tmp.cleanup();
  });
  return f;
}
