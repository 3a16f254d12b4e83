// Records the shop into a journal with the recorder `krply record` runs, pausing it once around a forced
// compaction so the journal holds a real gap: the resumed watch meets 410 Gone and relists.
import type { Recorder } from "../../src/watch/recorder";
import type { StreamStatus } from "../../src/watch/types";
import type { ShopWriter } from "./cluster";
import {
  PAUSED_STEPS,
  RECORDED_STEPS,
  RESUMED_STEPS,
  SHOP_NAMESPACE,
  SHOP_RESOURCES,
  caughtUp,
  lastWrittenRv,
  type ShopStep,
} from "./shop";

/** Where to record from and into. */
export interface RecordTarget {
  journalPath: string;
  /** kubeconfig the recorder reads with (the harness's read-only `recorder` user). */
  kubeconfig?: string;
  context?: string;
  /** Namespaces to record; empty records every namespace (a real cluster). */
  namespaces: string[];
  resources: string[];
}

/** Starts the same Recorder `krply record` starts, with the same journal settings. */
export async function startRecorder(target: RecordTarget): Promise<Recorder> {
  const { Recorder, journalOptionsOf } = await import("../../src/watch/recorder");
  const { loadConfig } = await import("../../src/config");
  const config = loadConfig(process.env, { defaults: { KRPLY_JOURNAL: target.journalPath } });
  const recorder = new Recorder({
    journalPath: target.journalPath,
    kubeconfig: target.kubeconfig,
    context: target.context,
    selection: { resources: target.resources, namespaces: target.namespaces, selector: "" },
    mirrorEveryMs: 30_000,
    journalRetryMs: 0,
    journal: journalOptionsOf(config),
    followCrds: true,
  });
  await recorder.start();
  return recorder;
}

/** The shop's streams as the supervisor reports them, by plain resource name. */
const byResource = (streams: StreamStatus[]) =>
  streams.map(s => ({ resource: s.key.resource, durableRv: s.durableRv }));

async function until(what: string, ok: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise(r => setTimeout(r, 100));
  }
}

async function runSteps(
  writer: ShopWriter,
  steps: readonly ShopStep[],
  say: (line: string) => void,
): Promise<{ resource: string; rv: string }[]> {
  const writes: { resource: string; rv: string }[] = [];
  for (const step of steps) {
    say(`  ${step.say}`);
    writes.push({ resource: step.resource, rv: await writer.run(step) });
  }
  return writes;
}

/** What the shop sequence hands back: the recorder (still running) and what it saw. */
export interface ShopRecording {
  recorder: Recorder;
  gaps: number;
}

/**
 * The whole scripted history: record, write, pause, write while paused, compact, resume (410 → gap and
 * relist), write again, and wait until every write the recorder can still see is committed.
 */
export async function recordShop(
  opts: {
    journalPath: string;
    recorderKubeconfig: string;
    writer: ShopWriter;
    compact: () => Promise<unknown>;
  },
  say: (line: string) => void,
): Promise<ShopRecording> {
  const target: RecordTarget = {
    journalPath: opts.journalPath,
    kubeconfig: opts.recorderKubeconfig,
    namespaces: [SHOP_NAMESPACE],
    resources: SHOP_RESOURCES,
  };
  await opts.writer.prepare();
  let recorder = await startRecorder(target);
  const watching = () =>
    recorder.status().length === SHOP_RESOURCES.length &&
    recorder.status().every(s => s.phase === "watching");
  await until("the shop's streams to start watching", watching);
  say("shop workload (recorded):");
  const recorded = await runSteps(opts.writer, RECORDED_STEPS, say);
  await until("the recorder to commit the shop's writes", () =>
    caughtUp(lastWrittenRv(recorded), byResource(recorder.status())),
  );

  say("pausing the recorder; writing while it is away, then compacting etcd:");
  await recorder.stop();
  await runSteps(opts.writer, PAUSED_STEPS, say);
  await opts.compact();
  say("  compacted etcd: the paused recorder's resourceVersion is gone from history");

  recorder = await startRecorder(target);
  // The resumed configmaps watch asks for a compacted RV, gets 410 Gone, records the gap and relists.
  await until("the resumed recorder to record the gap", () =>
    recorder.status().some(s => s.gaps > 0),
  );
  await until("the shop's streams to watch again", watching);
  say("resumed recording (a gap is recorded for what it missed):");
  const resumed = await runSteps(opts.writer, RESUMED_STEPS, say);
  await until("the recorder to commit the writes after the gap", () =>
    caughtUp(lastWrittenRv(resumed), byResource(recorder.status())),
  );
  return { recorder, gaps: recorder.status().reduce((n, s) => n + s.gaps, 0) };
}
