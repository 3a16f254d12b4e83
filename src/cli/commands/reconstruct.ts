import type { Command } from "commander";
import { stringify } from "yaml";
import { objectAt, resolveCluster, resolveKind, type At } from "../../materialize";
import { printAnswer } from "../output";
import { optionsOf, parseRef, parseTimeFlag, withView } from "./common";

interface Flags {
  namespace: string;
  at?: string;
  rv?: string;
  stream?: string;
  group?: string;
}

/** `krply reconstruct <kind>/<name> -n NS --at T`: the object as it was, in YAML. */
export function registerReconstruct(program: Command): void {
  program
    .command("reconstruct <ref>")
    .description("the object as it was at a time (or a resourceVersion of its stream), as YAML")
    .option("-n, --namespace <ns>", "namespace (omit for cluster-scoped objects)", "")
    .option("--at <time>", "ISO time, now, or an age like 15m / 2h / 7d")
    .option("--rv <resourceVersion>", "a resourceVersion of the object's stream instead of a time")
    .option("--stream <id>", "stream id for --rv, when the object was recorded on several")
    .option("--group <group>", "API group, when the kind exists in several")
    .option("--cluster <id>", "cluster id (default: the only one in the journal)")
    .action((refText: string, flags: Flags, cmd: Command) => {
      const opts = optionsOf(cmd);
      const ref = parseRef(refText);
      if ((flags.at === undefined) === (flags.rv === undefined)) {
        throw new Error("pass exactly one of --at or --rv");
      }
      const at: At =
        flags.rv !== undefined
          ? { resourceVersion: flags.rv, ...(flags.stream ? { streamId: flags.stream } : {}) }
          : { time: parseTimeFlag(flags.at!, "--at") };
      withView(opts, v => {
        const cluster = resolveCluster(v, opts.cluster);
        const kind = resolveKind(v, cluster, ref.kind);
        const ans = objectAt(
          v,
          cluster,
          { kind, namespace: flags.namespace, name: ref.name, group: flags.group },
          at,
        );
        const inGap = ans.coverage.gaps.length > 0;
        printAnswer(opts, ans, a => {
          if (!a.object) return `# ${kind} ${ref.name} did not exist at that point (see warnings)`;
          const p = a.object.provenance;
          const head = `# ${p.recordType} ${p.watchType ?? ""} rv=${p.resourceVersion} observedAt=${p.observedAt} stream=${p.streamId}${inGap ? " (inside a gap)" : ""}`;
          return `${head}\n${stringify(a.object.object)}`;
        });
      });
    });
}
