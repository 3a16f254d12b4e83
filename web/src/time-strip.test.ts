import { MIN_WIDTH, placeMarkers, prunedMarker, stripRange } from "./time-strip";

const t = (s: number) => new Date(Date.UTC(2024, 0, 1) + s * 1000).toISOString();
const range = { fromMs: Date.parse(t(0)), toMs: Date.parse(t(100)) };

describe("time strip markers", () => {
  it("puts a window where it is, in proportion", () => {
    const [m] = placeMarkers("gap", [{ from: t(50), to: t(70), reason: "410 Gone" }], range);
    expect(m).toMatchObject({
      kind: "gap",
      left: 50,
      width: 20,
      open: false,
      from: t(50),
      to: t(70),
    });
    expect(m.label).toBe(`gap from ${t(50)} to ${t(70)} (410 Gone)`);
  });

  it("never draws a window thinner than a visible sliver, even at the right edge", () => {
    const [m] = placeMarkers("gap", [{ from: t(100), to: t(100) }], range);
    expect(m.width).toBe(MIN_WIDTH);
    expect(m.left).toBe(100 - MIN_WIDTH);
  });

  it("runs an open gap to the end and says it is open", () => {
    const [m] = placeMarkers("gap", [{ from: t(90), to: null }], range);
    expect(m).toMatchObject({ left: 90, width: 10, open: true });
    expect(m.label).toContain("still open");
  });

  it("clips windows to the strip and drops those outside it, sorted left to right", () => {
    const ms = placeMarkers(
      "down",
      [
        { from: t(80), to: t(120) },
        { from: t(-50), to: t(10) },
        { from: t(101), to: t(110) },
        { from: t(-30), to: t(-1) },
      ],
      range,
    );
    expect(ms.map(m => [m.left, m.width, m.open])).toEqual([
      [0, 10, false],
      [80, 20, true],
    ]);
    expect(ms[0].label).toContain("observed late");
  });

  it("marks pruned history from the strip's start to the horizon", () => {
    expect(prunedMarker(null, range)).toEqual([]);
    expect(prunedMarker(t(25), range).map(m => [m.kind, m.left, m.width])).toEqual([
      ["pruned", 0, 25],
    ]);
    expect(prunedMarker(t(-5), range)[0]).toMatchObject({ left: 0, width: MIN_WIDTH });
  });

  it("spans the range from the earliest time to the end, at least a second", () => {
    expect(stripRange([t(20), null, t(5), "junk"], Date.parse(t(600)))).toEqual({
      fromMs: Date.parse(t(5)),
      toMs: Date.parse(t(600)),
    });
    expect(stripRange([], Date.parse(t(600)))).toEqual({
      fromMs: Date.parse(t(599)),
      toMs: Date.parse(t(600)),
    });
    // A short history fills the strip instead of being squeezed to its right edge.
    expect(stripRange([t(590)], Date.parse(t(600))).fromMs).toBe(Date.parse(t(590)));
  });
});
