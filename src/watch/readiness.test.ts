import { notReadyReasons, streamReadiness, type ReadinessInput } from "./readiness";
import type { StreamStatus } from "./types";

function stream(id: string, over: Partial<StreamStatus> = {}): StreamStatus {
  return {
    streamId: id,
    key: { clusterId: "c", group: "", version: "v1", resource: id, namespace: "", selector: "" },
    phase: "watching",
    durableRv: "10",
    baselined: true,
    coverage: "available",
    lastEventAt: null,
    lagMs: 0,
    events: 0,
    reconnects: 0,
    gaps: 0,
    malformed: 0,
    lastError: null,
    ...over,
  };
}

const running = (streams: StreamStatus[], over: Partial<ReadinessInput> = {}): ReadinessInput => ({
  state: "running",
  failedStarts: 0,
  journalOpenFailures: 0,
  lastError: null,
  journal: { open: true, appendError: null },
  streams: streamReadiness(streams),
  ...over,
});

describe("recorder readiness", () => {
  it("is ready when it runs, the journal takes appends and every stream holds a baseline", () => {
    expect(notReadyReasons(running([stream("a"), stream("b")]))).toEqual([]);
    // Reconnecting after a baseline stays ready: the next watch resumes from the checkpoint.
    expect(notReadyReasons(running([stream("a", { phase: "backoff" })]))).toEqual([]);
    // A stream that was removed does not hold readiness back.
    expect(notReadyReasons(running([stream("a", { phase: "stopped", baselined: false })]))).toEqual(
      [],
    );
  });

  it("waits for every stream's baseline, naming a few and counting the rest", () => {
    const streams = Array.from({ length: 8 }, (_, i) =>
      stream(`s${i}`, { phase: "listing", baselined: false, durableRv: null }),
    );
    expect(notReadyReasons(running([stream("ok"), ...streams]))).toEqual([
      "8 of 9 streams have no baseline yet: s0, s1, s2, s3, s4 and 3 more",
    ]);
    // A relist after a gap: the stream has a checkpoint but no baseline it can resume from.
    expect(notReadyReasons(running([stream("g", { phase: "listing", baselined: false })]))).toEqual(
      ["1 of 1 streams have no baseline yet: g"],
    );
  });

  it("is not ready while the API server refuses a stream (RBAC revoked)", () => {
    const refused = stream("cm", { phase: "unavailable", coverage: "unavailable" });
    expect(streamReadiness([refused, stream("svc")])).toEqual({
      total: 2,
      baselined: 2,
      waiting: [],
      unavailable: ["cm"],
    });
    expect(notReadyReasons(running([refused, stream("svc")]))).toEqual([
      "1 of 2 streams are refused by the API server: cm",
    ]);
  });

  it("is not ready while the newest append failed or the journal is closed", () => {
    const journal = {
      open: true,
      appendError: "journal append of 3 records failed: disk I/O error",
    };
    expect(notReadyReasons(running([stream("a")], { journal }))).toEqual([
      "the newest journal append failed: journal append of 3 records failed: disk I/O error",
    ]);
    expect(notReadyReasons(running([], { journal: { open: false, appendError: null } }))).toEqual([
      "the journal is not open",
    ]);
  });

  it("reports the boot-retry state with the last error", () => {
    const base = running([]);
    expect(notReadyReasons({ ...base, state: "starting" })).toEqual(["the recorder is starting"]);
    expect(
      notReadyReasons({
        ...base,
        state: "starting",
        journalOpenFailures: 3,
        lastError: "open /data/krply/j.db: unable to open database file",
      }),
    ).toEqual([
      "the journal cannot be opened (3 attempts): open /data/krply/j.db: unable to open database file",
    ]);
    expect(
      notReadyReasons({ ...base, state: "retrying", failedStarts: 2, lastError: "HTTP 503" }),
    ).toEqual(["start attempt 2 failed; retrying: HTTP 503"]);
    expect(notReadyReasons({ ...base, state: "refused", lastError: "page 7 damaged" })).toEqual([
      "the journal is refused; nothing is recorded until it is repaired: page 7 damaged",
    ]);
    expect(notReadyReasons({ ...base, state: "stopped" })).toEqual(["the recorder stopped"]);
  });
});
