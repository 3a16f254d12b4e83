import { spawn } from "node:child_process";
import { join } from "node:path";
import { eventRecord, type StreamKey } from "../../event";
import { configMap, tempJournalPath } from "../../../test/support/journal-fixtures";
import { JournalError, openJournal } from "..";
import { leaseDecision, type LeaseHolder } from "./lease";

const me = { host: "node-a", pid: 40, instance: "me" };
const holder = (over: Partial<LeaseHolder>): LeaseHolder => ({
  host: "node-a",
  pid: 41,
  instance: "other",
  since: 0,
  heartbeat: 1_000,
  ...over,
});
const alive = () => true;
const dead = () => false;

describe("who may take the recorder lease (pure)", () => {
  it("takes a free lease or its own", () => {
    expect(leaseDecision(null, me, 0, 30_000, alive).take).toBe(true);
    expect(leaseDecision(holder({ instance: "me" }), me, 0, 30_000, alive).take).toBe(true);
  });

  it("refuses a live holder, naming it and the wait, and takes over once its heartbeat is older than the TTL", () => {
    const other = holder({ host: "node-b" });
    const refused = leaseDecision(other, me, 11_000, 30_000, alive);
    expect(refused).toEqual({
      take: false,
      why:
        "another recorder (node-b, pid 41) is writing this journal, last heard from 10 s ago; " +
        "two recorders never write one journal. Stop the other one, or wait 20 s if it is gone",
    });
    expect(leaseDecision(other, me, 31_001, 30_000, alive).take).toBe(true);
  });

  it("on the same host takes at once from a dead pid, or from an earlier life of its own pid", () => {
    expect(leaseDecision(holder({}), me, 2_000, 30_000, dead).take).toBe(true);
    expect(leaseDecision(holder({}), me, 2_000, 30_000, alive).take).toBe(false);
    const samePid = holder({ pid: 40 });
    expect(leaseDecision(samePid, me, 2_000, 30_000, alive, () => false).take).toBe(true);
    expect(leaseDecision(samePid, me, 2_000, 30_000, alive, () => true).take).toBe(false);
    // Another host's pid says nothing about this host's processes.
    expect(leaseDecision(holder({ host: "node-b" }), me, 2_000, 30_000, dead).take).toBe(false);
  });
});

const stream: StreamKey = {
  clusterId: "c1",
  group: "",
  version: "v1",
  resource: "configmaps",
  namespace: "ns",
  selector: "",
};
const event = (rv: number) =>
  eventRecord({
    stream,
    watchType: "MODIFIED",
    object: configMap("a", "ns", "u1", rv, { v: String(rv) }),
    observedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, rv)).toISOString(),
  });

describe("the recorder lease on a real journal file", () => {
  const tmp = tempJournalPath("krply-lease-");
  afterAll(() => tmp.cleanup());

  it("refuses a second recorder in the same process with LEASED, and lets the next one in after close", () => {
    const first = openJournal(tmp.path, { recorderLease: true });
    let err: unknown;
    try {
      openJournal(tmp.path, { recorderLease: true });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(JournalError);
    expect((err as JournalError).code).toBe("LEASED");
    expect((err as JournalError).message).toMatch(
      /another recorder \(.+, pid \d+\) is writing this journal/,
    );
    // Writers that are not recorders (a snapshot, the sidecar) do not take the lease.
    openJournal(tmp.path).close();
    first.close();
    const next = openJournal(tmp.path, { recorderLease: true });
    next.append({ records: [event(1)], checkpoints: [] });
    next.close();
  });

  it("stops a stalled recorder's appends once another took the lease over", () => {
    let now = 0;
    const clock = () => now;
    const stalled = openJournal(tmp.path, {
      recorderLease: { ttlMs: 1_000, host: "node-b", now: clock },
    });
    stalled.append({ records: [event(2)], checkpoints: [] });
    now = 5_000; // node-b's recorder stalls past the TTL; node-c's starts and takes the lease.
    const successor = openJournal(tmp.path, {
      recorderLease: { ttlMs: 1_000, host: "node-c", now: clock },
    });
    expect(() => stalled.append({ records: [event(3)], checkpoints: [] })).toThrow(
      /another recorder took this journal's lease/,
    );
    successor.append({ records: [event(3)], checkpoints: [] });
    stalled.close();
    successor.close();
  });

  it("refuses while another process holds it, and takes it at once when that process is killed", async () => {
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        "-e",
        `const { openJournal } = require(${JSON.stringify(join(__dirname, "..", "index.ts"))});
         openJournal(process.argv[1], { recorderLease: true });
         process.stdout.write("held\\n");
         setInterval(() => {}, 1000);`,
        tmp.path,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.on("data", (d: Buffer) => d.toString().includes("held") && resolve());
        child.on("exit", code => reject(new Error(`child exited ${code}`)));
      });
      expect(() => openJournal(tmp.path, { recorderLease: true })).toThrow(
        new RegExp(`pid ${child.pid}\\) is writing this journal`),
      );
      const exited = new Promise(r => child.on("exit", r));
      child.kill("SIGKILL");
      await exited;
      const after = openJournal(tmp.path, { recorderLease: true });
      after.close();
    } finally {
      child.kill("SIGKILL");
    }
  });
});
