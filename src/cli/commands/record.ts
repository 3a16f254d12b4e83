import type { Command } from "commander";
import { DefaultResources } from "../../kube/default-resources";
import type { StreamStatus } from "../../watch/types";
import { globalOptions, journalPath } from "../program";
import { table } from "../output";
import { examples } from "./examples";

const collect = (v: string, prev: string[]) => [...prev, ...v.split(",").filter(Boolean)];

/** One frame of the live progress view: totals, events/s since the last frame, and every stream. */
export function renderProgress(
  streams: StreamStatus[],
  eventsBefore: number,
  elapsedMs: number,
): { text: string; events: number } {
  const events = streams.reduce((n, s) => n + s.events, 0);
  const gaps = streams.reduce((n, s) => n + s.gaps, 0);
  const rate = elapsedMs > 0 ? ((events - eventsBefore) * 1000) / elapsedMs : 0;
  const watching = streams.filter(s => s.phase === "watching").length;
  const head = `streams ${watching}/${streams.length} watching  events ${events}  ${rate.toFixed(1)} events/s  gaps ${gaps}`;
  const rows = streams.map(s => [
    `${s.key.group || "core"}/${s.key.resource}${s.key.namespace ? ` -n ${s.key.namespace}` : ""}`,
    s.phase,
    String(s.events),
    String(s.gaps),
    String(s.reconnects),
    s.durableRv ?? "-",
    `${s.lagMs} ms`,
  ]);
  return {
    text: `${head}\n${table(["STREAM", "STATE", "EVENTS", "GAPS", "RECONNECTS", "RV", "LAG"], rows)}\n`,
    events,
  };
}

/** `krply record`: runs the stream engine outside the cluster into a local journal. */
export function registerRecord(program: Command): void {
  program
    .command("record")
    .description("record changes of the selected resources into the journal (--store) until Ctrl-C")
    .option(
      "--kubeconfig <path>",
      "kubeconfig file (default: $KUBECONFIG, ~/.kube/config, in-cluster)",
    )
    .option("--context <name>", "kubeconfig context")
    .option(
      "-n, --namespace <ns>",
      "namespace to record (repeatable, comma-separated)",
      collect,
      [],
    )
    .option(
      "-r, --resource <name>",
      `resource to record: kubectl names, "*.group" or "*" (default: ${DefaultResources.join(",")})`,
      collect,
      [],
    )
    .option("-l, --selector <labels>", "label selector", "")
    .addHelpText(
      "after",
      examples([
        [
          "krply record -r cm,deploy -n shop --store shop.db",
          "record two resources of one namespace",
        ],
        ["krply record --context prod -r '*.apps'", "every apps/ resource of another context"],
      ]),
    )
    .action(async (opts: RecordFlags, cmd: Command) => {
      await runRecord(opts, await journalPath(globalOptions(cmd)));
    });
}

interface RecordFlags {
  kubeconfig?: string;
  context?: string;
  namespace: string[];
  resource: string[];
  selector: string;
}

async function runRecord(opts: RecordFlags, store: string): Promise<void> {
  // Before the recorder's modules load: their compilation and the first LIST already grow the heap.
  (await import("../../watch/heap-trim")).leanRecorderHeap();
  // The recorder brings the kube client; only this command loads it, so readers start fast.
  const { Recorder, journalOptionsOf } = await import("../../watch/recorder");
  // Retention and redaction follow the same KRPLY_* settings as in the cluster.
  // Loaded here, not at import: `krply --help` and the readers never need the config schema.
  const { loadConfig } = await import("../../config");
  const config = loadConfig(process.env, { defaults: { KRPLY_JOURNAL: store } });
  const recorder = new Recorder({
    journalPath: store,
    kubeconfig: opts.kubeconfig,
    context: opts.context,
    selection: {
      resources: opts.resource.length > 0 ? opts.resource : [...DefaultResources],
      namespaces: opts.namespace,
      selector: opts.selector,
    },
    mirrorEveryMs: 30_000,
    journalRetryMs: 0,
    journal: journalOptionsOf(config),
    // No Pepr Reconcile binding out here: follow CRDs created and deleted after the start ourselves.
    followCrds: true,
  });
  const out = process.stderr;
  const tty = out.isTTY === true;
  let stopping: Promise<void> | null = null;
  const finished = new Promise<void>(resolve => {
    const stop = () => {
      stopping ??= recorder.stop().then(resolve);
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  await recorder.start();
  const id = recorder.clusterIdentity!;
  out.write(`recording ${id.server} (cluster ${id.clusterId}) into ${store}; Ctrl-C stops\n`);
  let last = { at: Date.now(), events: 0 };
  let lines = 0;
  const frame = () => {
    const now = Date.now();
    const p = renderProgress(recorder.status(), last.events, now - last.at);
    last = { at: now, events: p.events };
    if (tty) {
      // Redraw in place: move up over the previous frame and clear it.
      if (lines > 0) out.write(`\x1b[${lines}A\x1b[J`);
      out.write(p.text);
      lines = p.text.split("\n").length - 1;
    } else {
      out.write(p.text.split("\n")[0] + "\n");
    }
  };
  const timer = setInterval(frame, tty ? 1000 : 10_000);
  await finished;
  clearInterval(timer);
  frame();
  out.write("stopped; every queued record was committed\n");
}
