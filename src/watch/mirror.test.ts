import { lostStreams, mirrorTick, parseMirror, startCheckpointMirror } from "./mirror";

describe("mirrorTick", () => {
  it("writes one coalesced value, and nothing while the watermarks are unchanged", () => {
    const state = { last: null as string | null };
    const v = mirrorTick(state, { b: "2", a: "1" });
    expect(v).toBe('{"v":1,"watermarks":{"a":"1","b":"2"}}');
    state.last = v;
    expect(mirrorTick(state, { a: "1", b: "2" })).toBeNull();
    expect(mirrorTick(state, { a: "1", b: "3" })).not.toBeNull();
  });
});

describe("startCheckpointMirror", () => {
  it("writes only changed watermarks and writes again after a failed write", async () => {
    let marks: Record<string, string> = { a: "1" };
    const written: string[] = [];
    const errors: unknown[] = [];
    let refuse = false;
    const mirror = startCheckpointMirror(
      () => marks,
      v => {
        if (refuse) throw new Error("store refused");
        written.push(v);
      },
      60_000,
      err => errors.push(err),
    );
    try {
      await mirror.tick();
      await mirror.tick();
      expect(written).toEqual(['{"v":1,"watermarks":{"a":"1"}}']);
      marks = { a: "2" };
      refuse = true;
      await mirror.tick();
      expect(errors).toHaveLength(1);
      // The failed value is not remembered as written, so the next tick carries it.
      refuse = false;
      await mirror.tick();
      expect(written).toEqual(['{"v":1,"watermarks":{"a":"1"}}', '{"v":1,"watermarks":{"a":"2"}}']);
    } finally {
      mirror.stop();
    }
  });
});

describe("lostStreams", () => {
  const a = "c1/-/v1/configmaps/shop/-";
  const b = "c1/apps/v1/deployments/shop/-";
  const other = "c2/-/v1/configmaps/shop/-";
  const marks = { [a]: "50", [b]: "70", [other]: "9" };

  it("finds nothing when the journal holds every mirrored RV of this cluster", () => {
    const held: Record<string, string[]> = { [a]: ["40", "50", "60"], [b]: ["70"] };
    const lost = lostStreams(marks, "c1", {
      lastRv: id => held[id]?.at(-1),
      hasResourceVersion: (id, rv) => held[id]?.includes(rv) ?? false,
    });
    expect(lost).toEqual([]);
  });

  it("names every stream of this cluster when the journal is empty, and skips other clusters", () => {
    const lost = lostStreams(marks, "c1", {
      lastRv: () => undefined,
      hasResourceVersion: () => false,
    });
    expect(lost).toEqual([
      { streamId: a, mirroredRv: "50", journalRv: null },
      { streamId: b, mirroredRv: "70", journalRv: null },
    ]);
  });

  it("names a stream the journal holds only up to an older RV (restored from an old backup)", () => {
    const held: Record<string, string[]> = { [a]: ["10", "20"], [b]: ["70"] };
    const lost = lostStreams(marks, "c1", {
      lastRv: id => held[id]?.at(-1),
      hasResourceVersion: (id, rv) => held[id]?.includes(rv) ?? false,
    });
    expect(lost).toEqual([{ streamId: a, mirroredRv: "50", journalRv: "20" }]);
  });

  it("reads what the mirror writes, and nothing from a garbled value", () => {
    const state = { last: null as string | null };
    expect(parseMirror(mirrorTick(state, { [a]: "50" }))).toEqual({ [a]: "50" });
    expect(parseMirror("{not json")).toBeNull();
    expect(parseMirror(null)).toBeNull();
  });
});
