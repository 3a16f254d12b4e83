import type { Command } from "commander";
import { resolveCluster, resolveKind, search, type SearchHit } from "../../materialize";
import { printAnswer, table } from "../output";
import { optionsOf, withView } from "./common";

function rows(hits: SearchHit[]): string[][] {
  return hits.flatMap(h =>
    h.ranges.map(r => [
      h.kind,
      h.namespace || "-",
      h.name,
      `${r.from}${r.start === "first-seen" ? " (first seen)" : ""}`,
      r.to ? `${r.to} (${r.end})` : "still exists",
      r.uncertain ? "uncertain" : "-",
    ]),
  );
}

/** `krply search NAME`: when and where objects with this name prefix existed. */
export function registerSearch(program: Command): void {
  program
    .command("search <name>")
    .description(
      "when and where objects existed, by name prefix, kind and labels, across all history",
    )
    .option("--kind <kind>", "only this kind")
    .option("-l, --selector <labels>", "label selector: a=b,c!=d,e,!f")
    .option("--cluster <id>", "only this cluster (default: all)")
    .action((name: string, flags: { kind?: string; selector?: string }, cmd: Command) => {
      const opts = optionsOf(cmd);
      withView(opts, v => {
        let kind: string | undefined;
        if (flags.kind) kind = resolveKind(v, resolveCluster(v, opts.cluster), flags.kind);
        const r = search(v, {
          clusterId: opts.cluster,
          kind,
          namePrefix: name,
          labelSelector: flags.selector,
        });
        printAnswer(opts, r, hits =>
          hits.length === 0
            ? `nothing named ${name}* was ever recorded`
            : table(["KIND", "NAMESPACE", "NAME", "FROM", "TO", "NOTE"], rows(hits)),
        );
      });
    });
}
