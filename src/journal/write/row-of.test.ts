import {
  baselineRecords,
  checkpointRecord,
  coverageRecord,
  eventRecord,
  gapRecord,
  snapshotRecord,
  streamIdOf,
  type JournalRecord,
} from "../../event";
import { at, configMap, streamKey } from "../../../test/support/journal-fixtures";
import { FLAG_PROV_WATCH, FLAG_SYNTHETIC } from "../store/rows";
import { JournalError } from "../types";
import { REDACTED_PREFIX } from "./redact";
import { checkIds, rowOf, type RowContext } from "./row-of";

const key = streamKey("configmaps", "", "v1", "shop");
const stream = { clusterId: "test", version: "v1" };
const ctx: RowContext = {
  policy: { kinds: new Set(["Secret"]), configMapKeyPatterns: [/password/i], salt: "s" },
};

const cm = (rv: number, data: Record<string, string> = { a: "1" }) =>
  configMap("app", "shop", "uid-1", rv, data);

describe("rowOf: what each record type becomes as a row", () => {
  it("an event keeps its object, hash and RV; a watch provenance is a flag, not meta", () => {
    const rec = eventRecord({
      stream: key,
      watchType: "MODIFIED",
      object: cm(7),
      observedAt: at(1),
    });
    const row = rowOf(rec, stream, ctx);
    expect(row.rv).toBe("7");
    expect(row.identity).toMatchObject({ kind: "ConfigMap", namespace: "shop", name: "app" });
    expect(row.patchRv).toBe("7");
    expect(row.object).toEqual(rec.object);
    expect(row.hash).toBe(rec.objectHash);
    expect(row.flags).toBe(FLAG_PROV_WATCH);
    expect(row.meta).toEqual({});
    expect(row.effect).toBeNull();
    expect(row.observedMs).toBe(Date.parse(at(1)));
  });

  it("a baseline object is synthetic, keeps its list provenance in meta and its RV", () => {
    const [obj, marker] = baselineRecords({
      stream: key,
      listResourceVersion: "40",
      listedAt: at(2),
      objects: [cm(9)],
      kind: "ConfigMap",
    });
    const row = rowOf(obj, stream, ctx);
    expect(row.flags & FLAG_SYNTHETIC).toBe(FLAG_SYNTHETIC);
    expect(row.meta.p).toMatchObject({ source: "list", listResourceVersion: "40" });
    expect(row.rv).toBe("9");
    expect(row.patchRv).toBe("9");
    expect(row.effect).toBeNull();
    // The marker that ends the list holds the list's RV and completes the stream's baseline.
    const m = rowOf(marker, stream, ctx);
    expect(m.identity).toBeNull();
    expect(m.object).toBeUndefined();
    expect(m.rv).toBe("40");
    expect(m.meta.b).toEqual({ listResourceVersion: "40", objectCount: 1 });
    expect(m.effect).toBe("baseline-done");
  });

  it("a checkpoint holds its RV and changes no state", () => {
    const rec = checkpointRecord({
      stream: key,
      resourceVersion: "55",
      observedAt: at(3),
      bookmark: true,
    });
    const row = rowOf(rec, stream, ctx);
    expect(row.rv).toBe("55");
    expect(row.identity).toBeNull();
    expect(row.effect).toBeNull();
  });

  it("gaps, coverage changes and snapshots name no position; gaps degrade, coverage sets state", () => {
    const gap = rowOf(
      gapRecord({
        stream: key,
        lastGoodResourceVersion: "60",
        reason: "410 Gone",
        detectedAt: at(4),
      }),
      stream,
      ctx,
    );
    expect(gap.rv).toBeNull();
    expect(gap.effect).toBe("degraded");
    expect(gap.meta.g).toMatchObject({ lastGoodResourceVersion: "60", reason: "410 Gone" });
    const lost = rowOf(
      coverageRecord({ stream: key, state: "unavailable", reason: "403", observedAt: at(5) }),
      stream,
      ctx,
    );
    expect(lost.rv).toBeNull();
    expect(lost.effect).toBe("unavailable");
    const back = rowOf(
      coverageRecord({ stream: key, state: "available", reason: "ok", observedAt: at(6) }),
      stream,
      ctx,
    );
    expect(back.effect).toBe("active");
    const snap = snapshotRecord(
      "test",
      {
        name: "s",
        at: at(7),
        complete: true,
        watermarks: {},
        missing: [],
        warnings: [],
        objectCount: 0,
      },
      at(7),
    );
    const s = rowOf(snap, { clusterId: "*", version: "" }, ctx);
    expect(s.rv).toBeNull();
    expect(s.meta.cl).toBe("test");
    expect(s.effect).toBeNull();
  });

  it("a resource without an object is spelled out in meta and is never a durable position", () => {
    const rec: JournalRecord = {
      ...checkpointRecord({
        stream: key,
        resourceVersion: "1",
        observedAt: at(1),
        bookmark: false,
      }),
      type: "event",
      checkpoint: undefined,
      resource: {
        group: "",
        version: "v1",
        kind: "ConfigMap",
        namespace: "shop",
        name: "x",
        uid: "u",
        resourceVersion: "70",
      },
    };
    const row = rowOf(rec, stream, ctx);
    expect(row.rv).toBeNull();
    expect(row.identity).toBeNull();
    expect(row.meta.r).toMatchObject({ name: "x", resourceVersion: "70" });
  });

  it("an object of another API version than its stream, or a uid it does not carry, keeps its resource", () => {
    const rec = eventRecord({
      stream: { ...key, version: "v2" },
      watchType: "ADDED",
      object: cm(8),
      observedAt: at(1),
    });
    expect(rowOf({ ...rec, streamId: streamIdOf(key) }, stream, ctx).meta.r).toMatchObject({
      version: "v2",
    });
  });

  it("keeps a non-canonical observedAt verbatim and rejects one that is not a date", () => {
    const rec = eventRecord({
      stream: key,
      watchType: "ADDED",
      object: cm(1),
      observedAt: "2024-01-01T00:00:01Z",
    });
    const row = rowOf(rec, stream, ctx);
    expect(row.meta.o).toBe("2024-01-01T00:00:01Z");
    expect(row.observedMs).toBe(Date.parse(at(1)));
    expect(() => rowOf({ ...rec, observedAt: "yesterday" }, stream, ctx)).toThrow(JournalError);
    expect(() => rowOf({ ...rec, observedAt: "yesterday" }, stream, ctx)).toThrow(/not a date/);
  });

  it("redacts before hashing, so the stored hash cannot confirm a guessed secret", () => {
    const clear = eventRecord({
      stream: key,
      watchType: "ADDED",
      object: cm(3, { password: "hunter2", plain: "x" }),
      observedAt: at(1),
    });
    const row = rowOf(clear, stream, ctx);
    const data = (row.object as { data: Record<string, string> }).data;
    expect(data.password.startsWith(REDACTED_PREFIX)).toBe(true);
    expect(data.plain).toBe("x");
    expect(row.hash).not.toBe(clear.objectHash);
    expect(JSON.stringify(row)).not.toContain("hunter2");
  });

  it("a foreign clusterId on a stream is kept in meta", () => {
    const rec = eventRecord({ stream: key, watchType: "ADDED", object: cm(1), observedAt: at(1) });
    expect(rowOf(rec, { clusterId: "other", version: "v1" }, ctx).meta.cl).toBe("test");
  });

  it("checkIds refuses a record without its id, stream or cluster", () => {
    const rec = eventRecord({ stream: key, watchType: "ADDED", object: cm(1), observedAt: at(1) });
    expect(() => checkIds(rec)).not.toThrow();
    for (const field of ["eventId", "streamId", "clusterId"] as const)
      expect(() => checkIds({ ...rec, [field]: "" })).toThrow(
        /eventId, streamId and clusterId are required/,
      );
  });
});
