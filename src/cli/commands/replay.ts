import type { Command } from "commander";
import type { ReplayStore } from "../../journal";
import type { KubeClient } from "../../kube/client";
import type { ApplyRun, DryRun, Plan, PolicyInput, Verdict } from "../../replay";
import { CliError, EXIT, usage } from "../errors";
import { printAnswer, table, toYaml } from "../output";
import { journalPath, type GlobalOptions } from "../program";
import { examples } from "./examples";
import { optionsOf, parseTimeFlag } from "./common";

interface TargetFlags {
  kubeconfig?: string;
  context?: string;
}

type Opts = GlobalOptions & { cluster?: string };

function localOnly(opts: Opts): void {
  if (opts.server)
    throw usage(
      "krply replay runs against a local journal (--store); the sidecar's replay routes take plans over HTTP",
    );
}

/** The journal's replay tables and a client for the target cluster; both closed after the body. */
async function withReplay<T>(
  opts: Opts,
  flags: TargetFlags,
  body: (store: ReplayStore, target: KubeClient) => Promise<T>,
): Promise<T> {
  localOnly(opts);
  // Loaded here, so commands that only read a journal never load the kube client.
  const { openReplayStore } = await import("../../journal");
  const { KubeClient, loadKubeConfig } = await import("../../kube/client");
  const store = openReplayStore(await journalPath(opts));
  let target: KubeClient | undefined;
  try {
    target = await KubeClient.create(
      loadKubeConfig({ kubeconfig: flags.kubeconfig, context: flags.context }),
    );
    return await body(store, target);
  } finally {
    await target?.close();
    store.close();
  }
}

const where = (ns: string, name: string): string => (ns ? `${ns}/${name}` : name);

function renderPlan(plan: Plan): string {
  const head = [
    `plan ${plan.id}  digest ${plan.digest}`,
    `source ${plan.source.clusterId} at ${plan.source.at}${plan.source.snapshotId ? ` (snapshot ${plan.source.snapshotId})` : ""}: ${plan.source.namespaces.join(", ")}`,
    `target ${plan.target.clusterId}${plan.target.isSource ? " (the source cluster, named on purpose)" : ""}: ${plan.targetNamespaces.join(", ")}`,
    `field manager ${plan.fieldManager}; coverage ${plan.coverageComplete ? "complete" : "INCOMPLETE (allowGaps)"}`,
  ].join("\n");
  const objects = table(
    ["#", "KIND", "OBJECT", "FROM", "WARNINGS"],
    plan.objects.map((o, i) => [
      String(i + 1),
      o.ref.kind,
      where(o.ref.namespace, o.ref.name),
      where(o.source.namespace, o.source.name),
      o.warnings.join("; ") || "-",
    ]),
  );
  const excluded =
    plan.excluded.length === 0
      ? "nothing excluded"
      : `excluded:\n${table(
          ["KIND", "OBJECT", "REASON"],
          plan.excluded.map(e => [e.kind, where(e.namespace, e.name), e.reason]),
        )}`;
  return `${head}\n\n${objects}\n\n${excluded}`;
}

function detailOf(v: Verdict): string {
  if (v.verdict === "conflict")
    return (v.conflicts ?? []).map(c => `${c.field} owned by ${c.manager}`).join("; ");
  if (v.verdict === "would-change") return (v.changes ?? []).map(c => c.path).join(", ");
  return v.message ?? "";
}

function renderDryRun(d: DryRun): string {
  const rows = d.verdicts.map(v => [
    v.ref.kind,
    where(v.ref.namespace, v.ref.name),
    v.verdict.toUpperCase(),
    [detailOf(v), ...v.preflight].filter(Boolean).join("; ") || "-",
  ]);
  const counts = Object.entries(d.counts)
    .map(([k, n]) => `${n} ${k}`)
    .join(", ");
  return `${table(["KIND", "OBJECT", "VERDICT", "DETAIL"], rows)}\n\ndry run of ${d.planId} at ${d.at}: ${counts}\n${
    d.ok
      ? "DRY-RUN-OK: the plan may be approved and applied"
      : "NOT OK: fix the conflicts, rejections and errors, then plan again"
  }`;
}

function renderRun(r: ApplyRun): string {
  const rows = r.items.map(i => [
    i.ref.kind,
    where(i.ref.namespace, i.ref.name),
    i.result.toUpperCase(),
    i.message ?? "-",
  ]);
  return `${table(["KIND", "OBJECT", "RESULT", "MESSAGE"], rows)}\n\napply ${r.runId} of ${r.planId}: ${r.applied} applied, ${r.notApplied} not applied${r.message ? `; ${r.message}` : ""}`;
}

/** -o yaml of a plan is its exact manifests, one document each, in apply order. */
async function printPlan(opts: Opts, plan: Plan, extra: string[] = []): Promise<void> {
  if (opts.output === "yaml") {
    const docs = await Promise.all(plan.objects.map(o => toYaml(o.manifest)));
    process.stdout.write(docs.join("---\n"));
    return;
  }
  await printAnswer(opts, { data: plan, warnings: [...plan.warnings, ...extra] }, renderPlan);
}

const collect = (v: string, prev: string[]): string[] => [...prev, v];

function pairs(list: string[], flag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of list) {
    const i = p.lastIndexOf("=");
    if (i <= 0 || i === p.length - 1) throw usage(`${flag} "${p}" is not <from>=<to>`);
    out[p.slice(0, i)] = p.slice(i + 1);
  }
  return out;
}

interface PlanFlags extends TargetFlags {
  at?: string;
  snapshot?: string;
  namespace: string[];
  map: string[];
  rename: string[];
  include: string[];
  allowFinalizers: boolean;
  allowOwnerRefs: boolean;
  allowGaps: boolean;
  intoSourceCluster: boolean;
}

const INCLUDES = ["secrets", "roles", "pods", "jobs", "pv", "webhooks", "crds"] as const;

function policyOfFlags(f: PlanFlags): PolicyInput {
  const policy: PolicyInput = {
    allowFinalizers: f.allowFinalizers,
    allowOwnerRefs: f.allowOwnerRefs,
    allowGaps: f.allowGaps,
    namespaceMap: pairs(f.map, "--map"),
    nameMap: pairs(f.rename, "--rename"),
  };
  for (const inc of f.include) {
    const k = inc.toLowerCase();
    if (!(INCLUDES as readonly string[]).includes(k))
      throw usage(`--include ${inc}: choose from ${INCLUDES.join(", ")}`);
    const key = `include${k === "pv" ? "PV" : k === "crds" ? "CRDs" : k[0].toUpperCase() + k.slice(1)}`;
    (policy as Record<string, unknown>)[key] = true;
  }
  return policy;
}

function targetOptions(cmd: Command): Command {
  return cmd
    .option(
      "--kubeconfig <path>",
      "kubeconfig of the target cluster (default: $KUBECONFIG, ~/.kube/config)",
    )
    .option("--context <name>", "kubeconfig context of the target cluster");
}

/** `krply replay plan | dry-run | approve | apply | show`. */
export function registerReplay(program: Command): void {
  const replay = program
    .command("replay")
    .description(
      "rebuild a namespace's state from history as a reviewed, approved server-side apply",
    )
    .addHelpText(
      "after",
      examples([
        [
          "krply replay plan -n shop --at 2h --map shop=shop-restore",
          "plan shop as it was 2 hours ago",
        ],
        ["krply replay dry-run rp-1a2b3c4d5e", "verdict per object against the target"],
        ["krply replay approve rp-1a2b3c4d5e", "approve (RBAC on replayplans decides who may)"],
        ["krply replay apply rp-1a2b3c4d5e --confirm", "apply an approved, dry-run-ok plan"],
        ["krply replay show rp-1a2b3c4d5e -o yaml", "the exact manifests"],
      ]),
    );

  targetOptions(
    replay
      .command("plan")
      .description("plan a replay of namespaces at a time or snapshot into the target cluster")
      .option("--at <time>", "ISO time, or an age like 2h")
      .option("--snapshot <id>", "a stored snapshot instead of a time")
      .option("-n, --namespace <ns>", "source namespace (repeat for more)", collect, [])
      .option("--map <src=dst>", "target namespace of a source namespace (repeat)", collect, [])
      .option("--rename <Kind/ns/name=new>", "give one object a new name (repeat)", collect, [])
      .option("--include <what>", `also replay: ${INCLUDES.join(", ")} (repeat)`, collect, [])
      .option("--allow-finalizers", "keep finalizers", false)
      .option(
        "--allow-owner-refs",
        "keep owner references (UIDs are looked up in the target)",
        false,
      )
      .option(
        "--allow-gaps",
        "plan despite incomplete coverage (each affected object is warned)",
        false,
      )
      .option(
        "--into-source-cluster",
        "the target is the recorded cluster itself, on purpose",
        false,
      )
      .option("--cluster <id>", "source cluster id (default: the only one in the journal)"),
  ).action(async (flags: PlanFlags, c: Command) => {
    const opts = optionsOf(c);
    if (flags.namespace.length === 0) throw usage("name at least one source namespace with -n");
    if ((flags.at === undefined) === (flags.snapshot === undefined))
      throw usage("give either --at <time> or --snapshot <id>");
    const at = flags.at === undefined ? undefined : parseTimeFlag(flags.at, "--at");
    const policy = policyOfFlags(flags);
    const { openJournalView } = await import("../../journal");
    const { createPlan, PlanRefused } = await import("../../replay");
    await withReplay(opts, flags, async (store, target) => {
      const view = openJournalView(await journalPath(opts));
      try {
        const { plan, parts } = await createPlan(view, store, target, {
          sourceCluster: opts.cluster,
          at,
          snapshotId: flags.snapshot,
          sourceNamespaces: flags.namespace,
          policy,
          intoSourceCluster: flags.intoSourceCluster,
        });
        await printPlan(opts, plan, [
          `ReplayPlan ${parts.map(p => p.metadata.name).join(", ")} created in the target; approve it with \`krply replay approve ${plan.id}\` or kubectl`,
        ]);
      } catch (err) {
        if (err instanceof PlanRefused) throw new CliError(err.message, EXIT.FAILURE);
        throw err;
      } finally {
        view.close();
      }
    });
  });

  targetOptions(
    replay
      .command("dry-run <plan-id>")
      .description("dry-run every object of a plan against the target (one server-side apply each)")
      .option("--concurrency <n>", "requests in flight", "8"),
  ).action(async (id: string, flags: TargetFlags & { concurrency: string }, c: Command) => {
    const opts = optionsOf(c);
    const concurrency = Number(flags.concurrency);
    if (!Number.isInteger(concurrency) || concurrency < 1)
      throw usage("--concurrency must be a whole number >= 1");
    const { dryRunStored } = await import("../../replay");
    const { dryRun, statusProblems } = await withReplay(opts, flags, (store, target) =>
      dryRunStored(store, target, id, { concurrency }),
    );
    await printAnswer(opts, { data: dryRun, warnings: statusProblems }, renderDryRun);
    if (!dryRun.ok) process.exitCode = EXIT.FAILURE;
  });

  targetOptions(
    replay
      .command("approve <plan-id>")
      .description("approve a plan: sets spec.approved on its ReplayPlan objects"),
  ).action(async (id: string, flags: TargetFlags, c: Command) => {
    const opts = optionsOf(c);
    localOnly(opts);
    const { KubeClient, loadKubeConfig } = await import("../../kube/client");
    const { approvePlan } = await import("../../replay");
    const target = await KubeClient.create(loadKubeConfig(flags));
    try {
      const parts = await approvePlan(target, id);
      await printAnswer(opts, { data: parts, warnings: [] }, ps =>
        table(
          ["REPLAYPLAN", "APPROVED", "BY", "EXPIRES"],
          ps.map(p => [
            p.metadata.name ?? id,
            p.spec.approved ? "yes" : "no",
            p.spec.approvedBy ?? "-",
            p.spec.approvalExpiresAt ?? "-",
          ]),
        ),
      );
    } finally {
      await target.close();
    }
  });

  targetOptions(
    replay
      .command("apply <plan-id>")
      .description("apply an approved, dry-run-ok plan (never forced; stops at the first failure)")
      .option("--confirm", "yes, write to the target cluster", false),
  ).action(async (id: string, flags: TargetFlags & { confirm: boolean }, c: Command) => {
    const opts = optionsOf(c);
    const { applyStored, ApplyRefused } = await import("../../replay");
    try {
      const { run, statusProblems } = await withReplay(opts, flags, (store, target) =>
        applyStored(store, target, id, { confirm: flags.confirm }),
      );
      await printAnswer(opts, { data: run, warnings: statusProblems }, renderRun);
      if (!run.ok) process.exitCode = EXIT.FAILURE;
    } catch (err) {
      if (err instanceof ApplyRefused)
        throw new CliError(`apply refused: ${err.message}`, EXIT.FAILURE);
      throw err;
    }
  });

  replay
    .command("show <plan-id>")
    .description(
      "a stored plan with its last dry run and apply runs (-o yaml: the exact manifests)",
    )
    .action(async (id: string, _flags: unknown, c: Command) => {
      const opts = optionsOf(c);
      localOnly(opts);
      const { openReplayStore } = await import("../../journal");
      const { loadPlan, loadDryRun, loadApplyRuns } = await import("../../replay");
      const store = openReplayStore(await journalPath(opts), { readonly: true });
      try {
        const plan = loadPlan(store, id);
        if (opts.output === "yaml") return await printPlan(opts, plan);
        const dryRun = loadDryRun(store, id);
        const runs = loadApplyRuns(store, id);
        await printAnswer(opts, { data: { plan, dryRun, runs }, warnings: plan.warnings }, d =>
          [
            renderPlan(d.plan),
            d.dryRun
              ? `${d.dryRun.digest === d.plan.digest ? "" : "STALE "}${renderDryRun(d.dryRun)}`
              : "no dry run yet",
            ...d.runs.map(renderRun),
          ].join("\n\n"),
        );
      } finally {
        store.close();
      }
    });
}
