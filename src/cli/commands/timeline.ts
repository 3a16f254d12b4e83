import type { Command } from "commander";
import type { TimelineEntry } from "../../materialize";
import { notFound } from "../errors";
import { printAnswer, table } from "../output";
import { examples } from "./examples";
import { optionsOf, parseRef, shortStream, withBackend } from "./common";

function summary(e: TimelineEntry): string {
  if (e.kind === "gap") return `GAP ${e.note ?? ""}`;
  const paths = e.changes.map(c => c.path);
  const shown = paths.slice(0, 3).join(", ") + (paths.length > 3 ? ` (+${paths.length - 3})` : "");
  return [e.note, shown].filter(Boolean).join(": ");
}

/** `krply timeline <kind>/<name> -n NS`: every recorded change with RV, time, fields and manager. */
export function registerTimeline(program: Command): void {
  program
    .command("timeline <ref>")
    .description("every recorded change of an object: RV, observed time, changed fields, manager")
    .option("-n, --namespace <ns>", "namespace (omit for cluster-scoped objects)", "")
    .option("--group <group>", "API group, when the kind exists in several")
    .option("--status", "include status changes", false)
    .option("--cluster <id>", "cluster id (default: the only one in the journal)")
    .addHelpText(
      "after",
      examples([
        ["krply timeline deploy/web -n shop", "every change of Deployment shop/web"],
        ["kubectl krply timeline deploy/web -n shop", "the same, as a kubectl plugin"],
        ["krply timeline ns/shop --status -o yaml", "a namespace, status changes included"],
      ]),
    )
    .action(
      async (
        refText: string,
        flags: { namespace: string; group?: string; status: boolean },
        cmd: Command,
      ) => {
        const opts = optionsOf(cmd);
        const ref = parseRef(refText);
        const t = await withBackend(opts, b =>
          b.timeline({
            cluster: opts.cluster,
            kind: ref.kind,
            namespace: flags.namespace,
            name: ref.name,
            group: flags.group,
            includeStatus: flags.status,
          }),
        );
        if (t.data.length === 0) {
          // Nothing recorded under that name: say so (and how to look) instead of an empty table.
          const why = t.warnings[0] ?? `no record of ${refText}`;
          throw notFound(`${why}; \`krply search ${ref.name}\` lists what was recorded`);
        }
        // materialize loads with the answer (local mode already has it), not with `--help`.
        const { actorLabel } = await import("../../materialize");
        await printAnswer(opts, t, entries =>
          table(
            ["OBSERVED", "RV", "TYPE", "STREAM", "ACTOR", "SOURCE", "MANAGER", "CHANGE"],
            entries.map(e => [
              e.observedAt,
              e.resourceVersion ?? "-",
              e.kind === "gap" ? "GAP" : `${e.watchType ?? e.recordType}${e.synthetic ? "*" : ""}`,
              shortStream(e.streamId),
              e.actor ? actorLabel(e.actor) : "-",
              e.actor?.source ?? "-",
              e.manager ?? "-",
              summary(e),
            ]),
          ),
        );
      },
    );
}
