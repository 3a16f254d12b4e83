import type { Command } from "commander";
import type { At } from "../../materialize";
import { usage } from "../errors";
import { printAnswer, toYaml } from "../output";
import { examples } from "./examples";
import { optionsOf, parseRef, parseTimeFlag, withBackend } from "./common";

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
    .addHelpText(
      "after",
      examples([
        ["krply reconstruct deploy/web -n shop --at 2h", "the Deployment as it was 2 hours ago"],
        ["krply reconstruct cm/app -n shop --rv 12345", "the ConfigMap at a resourceVersion"],
        ["krply reconstruct ns/shop --at now -o json", "a cluster-scoped object, as JSON"],
      ]),
    )
    .action(async (refText: string, flags: Flags, cmd: Command) => {
      const opts = optionsOf(cmd);
      const ref = parseRef(refText);
      if ((flags.at === undefined) === (flags.rv === undefined)) {
        throw usage("pass exactly one of --at or --rv");
      }
      if (flags.rv !== undefined && flags.rv.trim() === "") throw usage("--rv is empty");
      const at: At =
        flags.rv !== undefined
          ? { resourceVersion: flags.rv, ...(flags.stream ? { streamId: flags.stream } : {}) }
          : { time: parseTimeFlag(flags.at!, "--at") };
      const ans = await withBackend(opts, b =>
        b.objectAt({
          cluster: opts.cluster,
          kind: ref.kind,
          namespace: flags.namespace,
          name: ref.name,
          group: flags.group,
          at,
        }),
      );
      const inGap = ans.coverage.gaps.length > 0;
      await printAnswer(opts, ans, async a => {
        if (!a.object)
          return `# ${ref.kind}/${ref.name} did not exist at that point (see warnings)`;
        const p = a.object.provenance;
        const head = `# ${p.recordType} ${p.watchType ?? ""} rv=${p.resourceVersion} observedAt=${p.observedAt} stream=${p.streamId}${inGap ? " (inside a gap)" : ""}`;
        return `${head}\n${await toYaml(a.object.object)}`;
      });
    });
}
