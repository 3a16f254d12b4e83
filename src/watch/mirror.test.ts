import { mirrorTick, startCheckpointMirror } from "./mirror";

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
