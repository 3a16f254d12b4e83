import type { Command } from "commander";
import type { SearchHit } from "../../materialize";
import { printAnswer, table } from "../output";
import { examples } from "./examples";
import { optionsOf, withBackend } from "./common";

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
    .addHelpText(
      "after",
      examples([
        ["krply search web", "every object whose name starts with web"],
        ["krply search web --kind deploy -l app=web", "only Deployments labelled app=web"],
      ]),
    )
    .action(async (name: string, flags: { kind?: string; selector?: string }, cmd: Command) => {
      const opts = optionsOf(cmd);
      const r = await withBackend(opts, b =>
        b.search({
          cluster: opts.cluster,
          kind: flags.kind,
          namePrefix: name,
          selector: flags.selector,
        }),
      );
      await printAnswer(opts, r, hits =>
        hits.length === 0
          ? `nothing named ${name}* was ever recorded`
          : table(["KIND", "NAMESPACE", "NAME", "FROM", "TO", "NOTE"], rows(hits)),
      );
    });
}
