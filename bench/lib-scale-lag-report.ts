// The lag rows of bench/scale.ts: from a write's ack to the raw client's arrival (the server's
// delivery) and to the recorder's durable checkpoint, for the lag window and for the soak.
import { writeFileSync } from "node:fs";
import type { GcPause } from "./lib-gc-trace";
import { gcSummary } from "./lib-gc-trace";
import type { LagResult } from "./lib-lag-tracker";
import { pct, verdict, type Row } from "./lib-proc";

const ms = (xs: number[], p: number) => `${pct(xs, p).toFixed(0)} ms`;

/** The lag window's rows; `dump` writes every write's ack, arrival and durable times. */
export function reportLagWindow(
  row: Row,
  l: LagResult,
  arrivals: Map<number, number>,
  window: { from: number; to: number; gc: GcPause[] | null; dump?: string },
): void {
  const { acks, lags, rawPolled, durableAt, pollMs, undurable } = l;
  const rawLags: number[] = [];
  const adds: number[] = [];
  const unseenAt: number[] = [];
  for (const a of acks) {
    const got = arrivals.get(a.rv);
    if (got === undefined) {
      unseenAt.push(a.at - window.from);
      continue;
    }
    rawLags.push(got - a.at);
    const d = durableAt.get(a.rv);
    if (d !== undefined) adds.push(d - got);
  }
  for (const xs of [lags, rawLags, rawPolled, adds, pollMs]) xs.sort((a, b) => a - b);
  row("lag p50 raw watch (ack -> arrival)", ms(rawLags, 50), "server delivery, own process");
  row("lag p99 raw watch (ack -> arrival)", ms(rawLags, 99), "(baseline)");
  row("lag p99 raw watch, same 100 ms poll", ms(rawPolled, 99), "what a recorder adding 0 shows");
  row("lag p50 (ack -> durable)", ms(lags, 50), "poll every 100 ms");
  row("lag p99 (ack -> durable)", ms(lags, 99), verdict(pct(lags, 99) < 1000, "< 1000 ms"));
  row(
    "lag p99 recorder / raw (same poll)",
    (pct(lags, 99) / pct(rawPolled, 99)).toFixed(2),
    "1.00: the recorder adds nothing",
  );
  row("recorder adds p50 (arrival -> durable)", ms(adds, 50), "per write, incl. the poll");
  row("recorder adds p99 (arrival -> durable)", ms(adds, 99));
  row("journal poll p99 (view open + read)", ms(pollMs, 99), `max ${ms(pollMs, 100)}`);
  if (window.gc) row("recorder GC while measuring", gcSummary(window.gc, window.from, window.to));
  row("writes without a durable copy", String(undurable), verdict(undurable === 0, "0"));
  const unseen = unseenAt.length;
  row(
    "writes the raw client never saw",
    String(unseen),
    unseen > 0
      ? `from +${(unseenAt[0] / 1000).toFixed(1)} s to +${(unseenAt[unseen - 1] / 1000).toFixed(1)} s; ${arrivals.size} seen`
      : "expected 0",
  );
  if (window.dump) {
    // Every write of the lag window, for a look at when the tail happens (docs/benchmarks.md).
    const out = acks.map(a => [
      a.kind,
      a.rv,
      a.at,
      arrivals.get(a.rv) ?? null,
      durableAt.get(a.rv) ?? null,
    ]);
    writeFileSync(
      window.dump,
      JSON.stringify({ measureFrom: window.from, measureTo: window.to, gc: window.gc, acks: out }),
    );
  }
}

/** The soak's lag rows: every write of the soak, so a stall the one-minute window misses shows. */
export function reportSoakLag(row: Row, sl: LagResult, arrivals: Map<number, number>): void {
  const soakAdds = sl.acks.flatMap(a => {
    const got = arrivals.get(a.rv);
    const d = sl.durableAt.get(a.rv);
    return got === undefined || d === undefined ? [] : [d - got];
  });
  for (const xs of [sl.lags, sl.rawPolled]) xs.sort((a, b) => a - b);
  row("soak lag p99 raw watch, same 100 ms poll", ms(sl.rawPolled, 99));
  row(
    "soak lag p99 (ack -> durable)",
    ms(sl.lags, 99),
    verdict(pct(sl.lags, 99) < 1000, "< 1000 ms"),
  );
  row(
    "soak writes the recorder held > 1 s",
    String(soakAdds.filter(x => x > 1000).length),
    `of ${soakAdds.length}; max ${soakAdds.reduce((a, b) => Math.max(a, b), 0).toFixed(0)} ms`,
  );
  row("soak writes without a durable copy", String(sl.undurable), verdict(sl.undurable === 0, "0"));
}
