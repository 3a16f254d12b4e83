import type { Command } from "commander";
import { progress } from "../output";
import { examples } from "./examples";
import { optionsOf, parseTimeFlag, withBackend } from "./common";

interface Flags {
  kind?: string;
  namespace?: string;
  name?: string;
  since?: string;
  until?: string;
}

/** `krply export`: journal records as NDJSON, oldest first, for other tools. */
export function registerExport(program: Command): void {
  program
    .command("export")
    .description("journal records as NDJSON (one record a line, oldest first), with filters")
    .option("--kind <kind>", "only this kind")
    .option("-n, --namespace <ns>", "only this namespace")
    .option("--name <name>", "only objects with this name")
    .option("--since <time>", "records observed at or after this time")
    .option("--until <time>", "records observed before this time")
    .option("--cluster <id>", "only this cluster")
    .addHelpText(
      "after",
      examples([
        ["krply export > journal.ndjson", "every record"],
        ["krply export --kind deploy -n shop --since 1d | jq .type", "one day of Deployments"],
      ]),
    )
    .action(async (flags: Flags, cmd: Command) => {
      const opts = optionsOf(cmd);
      const since = flags.since === undefined ? undefined : parseTimeFlag(flags.since, "--since");
      const until = flags.until === undefined ? undefined : parseTimeFlag(flags.until, "--until");
      const bar = progress("exporting records");
      let n = 0;
      await withBackend(opts, b =>
        b.exportRecords(
          {
            cluster: opts.cluster,
            kind: flags.kind,
            namespace: flags.namespace,
            name: flags.name,
            since,
            until,
          },
          r => {
            process.stdout.write(`${JSON.stringify(r)}\n`);
            bar.tick(++n);
          },
        ),
      );
      bar.done();
    });
}
