import type { Command } from "commander";
import type { DiffResult } from "../../materialize";
import { printAnswer } from "../output";
import { examples } from "./examples";
import { optionsOf, parseTimeFlag, withBackend } from "./common";

const show = (v: unknown): string => (v === undefined ? "(absent)" : JSON.stringify(v));

function render(d: DiffResult): string {
  const lines = [
    `diff ${d.namespace ?? "(all namespaces)"} ${d.before} .. ${d.after}${d.hasGaps ? " [HAS GAPS]" : ""}`,
  ];
  if (d.objects.length === 0) lines.push("no changes");
  for (const o of d.objects) {
    const sign = o.change === "added" ? "+" : o.change === "removed" ? "-" : "~";
    lines.push(`${sign} ${o.kind} ${o.namespace ? `${o.namespace}/` : ""}${o.name}`);
    for (const c of o.changes) {
      const m = c.managers[0];
      const by = m ? `  by ${m.manager} (${m.operation}${m.time ? ` ${m.time}` : ""})` : "";
      const what = c.added
        ? `added ${show(c.after)}`
        : c.removed
          ? `removed (was ${show(c.before)})`
          : `${show(c.before)} -> ${show(c.after)}`;
      lines.push(`    ${c.path}: ${what}${by}`);
    }
  }
  return lines.join("\n");
}

/** `krply diff -n NS --since T1 --until T2`: objects and fields that changed between two times. */
export function registerDiff(program: Command): void {
  program
    .command("diff")
    .description("objects added, removed and changed between two times, field by field")
    .option("-n, --namespace <ns>", "only this namespace")
    .requiredOption("--since <time>", "earlier time: ISO, now, or an age like 2h")
    .option("--until <time>", "later time (default now)", "now")
    .option("--status", "include status changes", false)
    .option("--cluster <id>", "cluster id (default: the only one in the journal)")
    .addHelpText(
      "after",
      examples([
        ["krply diff -n shop --since 2h", "what changed in namespace shop in the last two hours"],
        [
          "krply diff --since 2026-01-31T08:00:00Z --until 2026-01-31T09:00:00Z",
          "one hour, all namespaces",
        ],
      ]),
    )
    .action(
      async (
        flags: { namespace?: string; since: string; until: string; status: boolean },
        cmd: Command,
      ) => {
        const opts = optionsOf(cmd);
        const since = parseTimeFlag(flags.since, "--since");
        const until = parseTimeFlag(flags.until, "--until");
        const d = await withBackend(opts, b =>
          b.diff({
            cluster: opts.cluster,
            namespace: flags.namespace,
            since,
            until,
            includeStatus: flags.status,
          }),
        );
        await printAnswer(opts, d, render);
      },
    );
}
