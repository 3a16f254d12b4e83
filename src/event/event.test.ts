import fc from "fast-check";
import {
  baselineRecords,
  canonicalJson,
  checkpointRecord,
  eventIdFor,
  eventRecord,
  gapRecord,
  objectHash,
  parseStreamId,
  streamIdOf,
  type StreamKey,
} from "./index";
// The schemas are not part of the index (importing it must not load zod).
import { JournalRecordSchema } from "./schema";

const key: StreamKey = {
  clusterId: "prod-eu",
  group: "apps",
  version: "v1",
  resource: "deployments",
  namespace: "default",
  selector: "app=web,tier in (a,b)",
};

describe("stream id", () => {
  it("prints empty parts as - and round-trips", () => {
    const core = { ...key, group: "", namespace: "", selector: "" };
    expect(streamIdOf(core)).toBe("prod-eu/-/v1/deployments/-/-");
    expect(parseStreamId(streamIdOf(core))).toEqual(core);
    expect(parseStreamId(streamIdOf(key))).toEqual(key);
  });

  it("round-trips arbitrary keys, including '-', '/' and '%'", () => {
    const part = fc.oneof(fc.constantFrom("", "-", "/", "%", "a/b", "%2D"), fc.string());
    const nonEmpty = fc.oneof(fc.constantFrom("-", "/", "x%y"), fc.string({ minLength: 1 }));
    fc.assert(
      fc.property(
        nonEmpty,
        part,
        nonEmpty,
        nonEmpty,
        part,
        part,
        (clusterId, group, version, resource, namespace, selector) => {
          const k = { clusterId, group, version, resource, namespace, selector };
          const id = streamIdOf(k);
          expect(id.split("/")).toHaveLength(6);
          expect(parseStreamId(id)).toEqual(k);
        },
      ),
    );
  });

  it("rejects malformed ids", () => {
    expect(() => parseStreamId("a/b")).toThrow(/6/);
    expect(() => parseStreamId("-/-/v1/x/-/-")).toThrow(/clusterId must not be empty/);
    expect(() => parseStreamId("c/-/-/-/-/-")).toThrow(/version, resource must not be empty/);
    expect(() => parseStreamId("c/%zz/v1/x/-/-")).toThrow(/percent/);
    expect(() => parseStreamId("c/%61/v1/x/-/-")).toThrow(/canonical/);
  });
});

describe("event ids", () => {
  const live = {
    clusterId: "c",
    streamId: "s",
    uid: "u",
    resourceVersion: "7",
    watchType: "MODIFIED" as const,
  };
  it("live ids are deterministic and ignore observation time", () => {
    const obj = { kind: "ConfigMap", metadata: { name: "a", uid: "u", resourceVersion: "7" } };
    const a = eventRecord({
      stream: key,
      watchType: "MODIFIED",
      object: obj,
      observedAt: "2024-01-01T00:00:00.000Z",
    });
    const b = eventRecord({
      stream: key,
      watchType: "MODIFIED",
      object: obj,
      observedAt: "2024-06-01T00:00:00.000Z",
    });
    expect(a.eventId).toBe(b.eventId);
    expect(eventIdFor(live)).toBe(eventIdFor({ ...live }));
    expect(eventIdFor(live)).not.toBe(eventIdFor({ ...live, watchType: "DELETED" }));
    expect(eventIdFor(live)).toMatch(/^[0-9a-f]{32}$/);
  });

  it("baseline ids include the list time, so a relist is a new observation", () => {
    const obj = { metadata: { name: "a", uid: "u", resourceVersion: "7" } };
    const one = baselineRecords({
      stream: key,
      listResourceVersion: "9",
      listedAt: "2024-01-01T00:00:00.000Z",
      objects: [obj],
      kind: "ConfigMap",
    });
    const two = baselineRecords({
      stream: key,
      listResourceVersion: "9",
      listedAt: "2024-01-02T00:00:00.000Z",
      objects: [obj],
      kind: "ConfigMap",
    });
    expect(one).toHaveLength(2);
    expect(one[0].eventId).not.toBe(two[0].eventId);
    expect(one[0].synthetic).toBe(true);
    expect(one[1].baseline).toEqual({ listResourceVersion: "9", objectCount: 1 });
    expect(one[0].eventId).not.toBe(eventIdFor(live));
  });

  it("builders produce records that satisfy the schema", () => {
    const obj = {
      kind: "ConfigMap",
      metadata: { name: "a", uid: "u", resourceVersion: "7" },
      data: { x: "1" },
    };
    const recs = [
      eventRecord({
        stream: key,
        watchType: "ADDED",
        object: obj,
        observedAt: "2024-01-01T00:00:00.000Z",
      }),
      ...baselineRecords({
        stream: key,
        listResourceVersion: "9",
        listedAt: "2024-01-01T00:00:00.000Z",
        objects: [obj],
        kind: "ConfigMap",
      }),
      gapRecord({
        stream: key,
        lastGoodResourceVersion: "7",
        reason: "410",
        detectedAt: "2024-01-01T00:00:00.000Z",
      }),
      checkpointRecord({
        stream: key,
        resourceVersion: "9",
        observedAt: "2024-01-01T00:00:00.000Z",
        bookmark: true,
      }),
    ];
    for (const r of recs) expect(JournalRecordSchema.parse(r)).toBeTruthy();
    expect(recs[0].resource).toMatchObject({
      group: "apps",
      version: "v1",
      kind: "ConfigMap",
      namespace: "",
      name: "a",
    });
  });
});

describe("objectHash", () => {
  it("ignores key order and sees every value", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), d => {
        const reversed = Object.fromEntries(Object.entries(d).reverse());
        expect(objectHash(reversed)).toBe(objectHash(d));
        expect(canonicalJson(JSON.parse(canonicalJson(d)))).toBe(canonicalJson(d));
      }),
    );
    expect(objectHash({ a: 1 })).not.toBe(objectHash({ a: 2 }));
  });
});
