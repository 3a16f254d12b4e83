import type { Command } from "commander";
import type { ActorChanges } from "../../materialize";
import { usage } from "../errors";
import { printAnswer, table } from "../output";
import { examples } from "./examples";
import { optionsOf, parseTimeFlag, withBackend } from "./common";

function rows(groups: ActorChanges[]): string[][] {
  return groups.flatMap(g =>
    g.changes.map((c, i) => [
      i === 0 ? g.label : "",
      i === 0 ? g.actor.source : "",
      c.observedAt,
      c.watchType,
      `${c.kind}/${c.name}`,
      c.namespace || "-",
      c.resourceVersion,
    ]),
  );
}

/** The audit details of an actor (agent, addresses), one line under the table. */
function detail(g: ActorChanges): string {
  const a = g.actor;
  if (a.source !== "audit") return "";
  const parts = [a.userAgent, a.sourceIPs?.join(",")].filter(Boolean);
  return parts.length > 0 ? `${g.label}: ${parts.join(" from ")}` : "";
}

/** `krply who -n NS --since 1h`: recorded changes grouped by who made them. */
export function registerWho(program: Command): void {
  program
    .command("who")
    .description(
      "recorded changes grouped by actor: the audit log's user when correlated, else the field manager",
    )
    .option("-n, --namespace <ns>", "only this namespace")
    .option("--since <time>", "from (ISO 8601, or an age like 15m, 1h, 7d)", "1h")
    .option("--until <time>", "to (ISO 8601, now, or an age)")
    .option("--limit <n>", "read at most this many changes", "10000")
    .option("--cluster <id>", "cluster id (default: the only one in the journal)")
    .addHelpText(
      "after",
      examples([
        ["krply who -n shop --since 1h", "who changed what in shop during the last hour"],
        ["krply who --since 2026-01-01T10:00:00Z --until 2026-01-01T11:00:00Z", "a fixed window"],
      ]),
    )
    .action(
      async (
        flags: { namespace?: string; since: string; until?: string; limit: string },
        cmd: Command,
      ) => {
        const opts = optionsOf(cmd);
        const limit = Number(flags.limit);
        if (!Number.isInteger(limit) || limit < 1)
          throw usage(`--limit "${flags.limit}" is not a positive whole number`);
        const r = await withBackend(opts, b =>
          b.who({
            cluster: opts.cluster,
            namespace: flags.namespace,
            since: parseTimeFlag(flags.since, "--since"),
            until: flags.until ? parseTimeFlag(flags.until, "--until") : undefined,
            limit,
          }),
        );
        await printAnswer(opts, r, groups =>
          groups.length === 0
            ? "no recorded changes in that window"
            : [
                table(
                  ["ACTOR", "SOURCE", "OBSERVED", "TYPE", "OBJECT", "NAMESPACE", "RV"],
                  rows(groups),
                ),
                ...groups.map(detail).filter(Boolean),
              ].join("\n"),
        );
      },
    );
}
