// Lag of bench/scale.ts: from a write's acknowledgement to the moment the journal's checkpoint of its
// stream covers its RV (the journal is polled every 100 ms, so lag is rounded up to the poll), and the
// same poll applied to a raw watch client's arrivals (lib-raw-watch.ts): what a recorder that adds
// nothing would show.

/** An acknowledged write: its stream (0 ConfigMaps, 1 Widgets), its RV and when the ack arrived. */
export interface Ack {
  kind: 0 | 1;
  rv: number;
  at: number;
}

export interface LagResult {
  acks: Ack[];
  /** Ack -> durable, ms, one per write made durable. */
  lags: number[];
  /** Ack -> seen by the raw client at a poll, ms. */
  rawPolled: number[];
  /** When each RV was first seen durable. */
  durableAt: Map<number, number>;
  /** How long each poll of the journal took, ms. */
  pollMs: number[];
  /** Writes still not durable a minute after the last one. */
  undurable: number;
}

const sleep = (ms: number) => new Promise(r => setTimeout(r, ms));

/**
 * Polls `durable` (each stream's checkpoint RV) every 100 ms until finish(); `arrivals` are the raw
 * client's arrival times by RV.
 */
export function trackLag(
  durable: () => { rv: [number, number] },
  arrivals: Map<number, number>,
): { track(a: Ack): void; finish(): Promise<LagResult> } {
  const acks: Ack[] = [];
  const pending: Ack[][] = [[], []];
  let rawPending: Ack[] = [];
  const lags: number[] = [];
  const rawPolled: number[] = [];
  const durableAt = new Map<number, number>();
  const pollMs: number[] = [];
  let measuring = true;
  let lastAck = Date.now();
  const poller = (async () => {
    while (measuring || pending[0].length + pending[1].length > 0) {
      const tp = Date.now();
      const s = durable();
      const now = Date.now();
      pollMs.push(now - tp);
      for (const k of [0, 1] as const) {
        const q = pending[k];
        let i = 0;
        // Acks of concurrent writers arrive slightly out of RV order; a late one waits one more poll.
        while (i < q.length && q[i].rv <= s.rv[k]) {
          durableAt.set(q[i].rv, now);
          lags.push(now - q[i++].at);
        }
        if (i > 0) q.splice(0, i);
      }
      rawPending = rawPending.filter(a => {
        const got = arrivals.get(a.rv);
        if (got === undefined || got > now) return true;
        rawPolled.push(now - a.at);
        return false;
      });
      if (!measuring && now - lastAck > 60_000) break;
      await sleep(100);
    }
  })();
  return {
    track: a => {
      acks.push(a);
      pending[a.kind].push(a);
      rawPending.push(a);
      lastAck = a.at;
    },
    finish: async () => {
      measuring = false;
      await poller;
      const undurable = pending[0].length + pending[1].length;
      return { acks, lags, rawPolled, durableAt, pollMs, undurable };
    },
  };
}
