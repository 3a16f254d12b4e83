// Audit correlation against the real API server's own audit log: three token users write, the
// recorder records, the audit log is followed while kube-apiserver rotates it, and every recorded
// write must name the user who made it.
import { randomBytes } from "node:crypto";
import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { AuditIngestor } from "../../src/audit";
import { streamIdOf, type JournalRecord } from "../../src/event";
import { KubeClient, loadKubeConfig } from "../../src/kube/client";
import { clusterIdentity } from "../../src/watch/cluster-identity";
import { startApiServer, kubeRequest, type ApiServer } from "../apiserver";
import { allRecords, cmKey, fastEngine, rig, until, type Rig } from "./recorder-support";
import { ensureNamespace } from "./recorder-workload";

jest.setTimeout(900_000);

const WRITERS = ["alice", "bob", "carol"] as const;
type Writer = (typeof WRITERS)[number];

// The harness policy, but with the RequestReceived stage kept, so every write has two stages.
const POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
rules:
  - level: Metadata
    resources: [{ group: "", resources: ["secrets"] }]
  - level: None
    resources: [{ group: "coordination.k8s.io", resources: ["leases"] }]
  - level: None
    nonResourceURLs: ["/healthz*", "/readyz*", "/livez*", "/version"]
  - level: RequestResponse
    verbs: ["create", "update", "patch", "delete", "deletecollection"]
  - level: Metadata
`;

interface Write {
  user: Writer;
  verb: string;
  name: string;
  rv: string;
  uid: string;
}

describe("audit correlation against the real API server's audit log", () => {
  let dir: string;
  let api: ApiServer;
  let admin: KubeClient;
  let clusterId: string;
  let rec: Rig;
  let conn: { server: string; caFile: string; tokens: Record<string, string> };
  const ns = `audit-${randomBytes(3).toString("hex")}`;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "krply-audit-it-"));
    const dataDir = join(dir, "apiserver");
    // Known tokens for the harness users (it keeps tokens.json as it finds it) plus three writers.
    const tokens: Record<string, string> = {};
    for (const u of ["admin", "recorder", "replayer", "nobody", ...WRITERS])
      tokens[u] = `${u}-${randomBytes(12).toString("hex")}`;
    const harness = {
      admin: tokens.admin,
      recorder: tokens.recorder,
      replayer: tokens.replayer,
      nobody: tokens.nobody,
    };
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(join(dataDir, "tokens.json"), JSON.stringify(harness));
    const csv = Object.entries(tokens)
      .map(([u, t]) => `${t},${u},krply-${u}${u === "admin" ? ',"system:masters"' : ""}`)
      .join("\n");
    writeFileSync(join(dir, "tokens.csv"), `${csv}\n`);
    writeFileSync(join(dir, "policy.yaml"), POLICY);
    api = await startApiServer({
      dataDir,
      extraArgs: [
        `--token-auth-file=${join(dir, "tokens.csv")}`,
        `--audit-policy-file=${join(dir, "policy.yaml")}`,
        // kube-apiserver rotates at 1 MB (its smallest size), so the workload crosses a rotation.
        "--audit-log-maxsize=1",
        "--audit-log-maxbackup=100",
      ],
    });
    conn = { server: api.url, caFile: api.caFile, tokens };
    admin = await KubeClient.create(loadKubeConfig({ kubeconfig: api.kubeconfigs.admin }));
    clusterId = (await clusterIdentity(admin)).clusterId;
    await ensureNamespace(admin, ns);
    await admin.json(`/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles`, {
      method: "POST",
      body: {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "Role",
        metadata: { name: "writers" },
        rules: [
          {
            apiGroups: [""],
            resources: ["configmaps", "secrets"],
            verbs: ["get", "list", "create", "update", "patch", "delete"],
          },
        ],
      },
    });
    await admin.json(`/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`, {
      method: "POST",
      body: {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: { name: "writers" },
        // The aggregated "edit" role stays empty without kube-controller-manager, so a Role of our own.
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "writers" },
        subjects: WRITERS.map(name => ({
          apiGroup: "rbac.authorization.k8s.io",
          kind: "User",
          name,
        })),
      },
    });
    // RBAC takes effect when the authorizer's cache sees the binding; wait for every writer.
    for (const u of WRITERS) {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const r = await kubeRequest(
          conn as never,
          u as never,
          "GET",
          `/api/v1/namespaces/${ns}/configmaps`,
        );
        if (r.status === 200) break;
        if (Date.now() > deadline)
          throw new Error(`${u} still cannot list configmaps: ${r.status}`);
        await new Promise(done => setTimeout(done, 200));
      }
    }
    rec = await rig(api.kubeconfigs.recorder, fastEngine, join(dir, "journal.db"));
  });

  afterAll(async () => {
    await rec?.close(true);
    await admin?.close();
    await api?.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  async function write(
    user: Writer,
    method: string,
    path: string,
    body?: object,
  ): Promise<{ rv: string; uid: string }> {
    const res = await kubeRequest(conn as never, user as never, method, path, body, {
      "User-Agent": `${user}-tool/1.0`,
    });
    if (res.status >= 300) throw new Error(`${user} ${method} ${path}: ${res.status} ${res.text}`);
    const o = res.json<{
      kind?: string;
      metadata?: { resourceVersion?: string; uid?: string };
      details?: { uid?: string };
    }>();
    return { rv: o.metadata?.resourceVersion ?? "", uid: o.metadata?.uid ?? o.details?.uid ?? "" };
  }

  /** Each writer creates its ConfigMaps, patches each many times, and deletes a few. */
  async function workload(
    user: Writer,
    objects: number,
    patches: number,
    deletes: number,
  ): Promise<Write[]> {
    const out: Write[] = [];
    const base = `/api/v1/namespaces/${ns}/configmaps`;
    // About 1 KB of data per object makes each write's audit line a few KB, so the log rotates.
    const filler = randomBytes(384).toString("hex");
    for (let i = 0; i < objects; i++) {
      const name = `${user}-${i}`;
      const r = await write(user, "POST", base, {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name },
        data: { filler, n: "0" },
      });
      out.push({ user, verb: "create", name, ...r });
    }
    for (let p = 1; p <= patches; p++) {
      for (let i = 0; i < objects; i++) {
        const name = `${user}-${i}`;
        const r = await write(user, "PATCH", `${base}/${name}`, { data: { n: String(p) } });
        out.push({ user, verb: "patch", name, ...r });
      }
    }
    for (let i = 0; i < deletes; i++) {
      const name = `${user}-${i}`;
      const r = await write(user, "DELETE", `${base}/${name}`);
      out.push({ user, verb: "delete", name, ...r });
    }
    return out;
  }

  it("matches at least 99% of recorded writes to the right user, stages apart, across a rotation", async () => {
    const key = cmKey(clusterId, ns);
    const streamId = streamIdOf(key);
    rec.supervisor.add({ key, kind: "ConfigMap", path: `/api/v1/namespaces/${ns}/configmaps` });
    await until("baseline", () => rec.journal.baselines(streamId).length > 0, 60_000);

    const ingest = new AuditIngestor(rec.journal, { clusterId, pollMs: 100 });
    const stop = new AbortController();
    const following = ingest.follow(api.auditLogPath, stop.signal);

    const writes = (await Promise.all(WRITERS.map(u => workload(u, 12, 12, 4)))).flat();
    const lastRv = Math.max(...writes.filter(w => w.rv).map(w => Number(w.rv)));
    const lastDelete = writes.filter(w => w.verb === "delete");
    await until(
      "journal caught up",
      () => {
        const recs = allRecords(rec.journal, streamId);
        const deleted = recs.filter(r => r.watchType === "DELETED").length;
        return (
          recs.some(r => Number(r.resource?.resourceVersion ?? 0) >= lastRv) &&
          deleted >= lastDelete.length
        );
      },
      120_000,
    );
    const events = allRecords(rec.journal, streamId).filter(
      (r): r is JournalRecord & { resource: NonNullable<JournalRecord["resource"]> } =>
        r.type === "event" && r.resource !== undefined,
    );
    const changes = events.map(e => ({
      streamId,
      observedAt: e.observedAt,
      resourceVersion: e.resource.resourceVersion,
      uid: e.resource.uid,
    }));
    await until(
      "audit caught up",
      () => {
        const found = rec.journal.auditCorrelations(changes);
        return (
          found.filter(f => f.length > 0).length >= events.length * 0.99 &&
          ingest.counts.pending === 0
        );
      },
      120_000,
      200,
    );
    stop.abort();
    await following.done;

    // Who really made each recorded version: by RV for writes, by uid for deletes.
    const byRv = new Map(writes.filter(w => w.verb !== "delete").map(w => [w.rv, w.user]));
    const deleter = new Map(writes.filter(w => w.verb === "delete").map(w => [w.uid, w.user]));
    const found = rec.journal.auditCorrelations(changes);
    let right = 0;
    const wrong: string[] = [];
    events.forEach((e, i) => {
      const expected =
        e.watchType === "DELETED"
          ? deleter.get(e.resource.uid)
          : byRv.get(e.resource.resourceVersion);
      const complete = found[i].find(c => c.audit?.stage === "ResponseComplete");
      if (
        expected &&
        complete?.audit?.user === expected &&
        complete.audit.userAgent === `${expected}-tool/1.0`
      )
        right++;
      else
        wrong.push(
          `${e.watchType} ${e.resource.name}@${e.resource.resourceVersion}: ${complete?.audit?.user ?? "none"} (want ${expected})`,
        );
    });
    const rate = right / events.length;
    process.stdout.write(
      `audit correlation: ${right}/${events.length} recorded writes matched to the right user (${(rate * 100).toFixed(2)}%), ` +
        `${writes.length} writes by ${WRITERS.length} users, ${following.follower.stats.rotations} log rotation(s), ` +
        `counts ${JSON.stringify(ingest.counts)}\n`,
    );
    expect(events.length).toBe(writes.length);
    expect(wrong.slice(0, 5)).toEqual([]);
    expect(rate).toBeGreaterThanOrEqual(0.99);

    // Both stages of each write are kept, as distinct records.
    const stages = found.flat().map(c => c.audit!.stage);
    expect(stages.filter(s => s === "RequestReceived")).toHaveLength(events.length);
    expect(stages.filter(s => s === "ResponseComplete")).toHaveLength(events.length);
    expect(new Set(found.flat().map(c => c.eventId)).size).toBe(found.flat().length);

    // kube-apiserver rotated the log while it was followed, and nothing was lost.
    expect(following.follower.stats.rotations).toBeGreaterThanOrEqual(1);
    const logs = readdirSync(dirname(api.auditLogPath)).filter(f => /^audit.*\.log$/.test(f));
    expect(logs.length).toBeGreaterThanOrEqual(2);

    // Reading every rotated file and the current one again adds nothing.
    const before = rec.journal.recordCount();
    const again = new AuditIngestor(rec.journal, { clusterId, pendingMs: 0 });
    // Backups sort before audit.log ("-" < "."), and their timestamps keep them in order.
    await again.importFiles(logs.sort().map(f => join(dirname(api.auditLogPath), f)));
    expect(rec.journal.recordCount()).toBe(before);
    expect(again.counts.written).toBe(0);
    expect(again.counts.duplicate).toBe(2 * events.length);
  });

  it("counts and skips a malformed line, a huge line and an event for an unknown object", async () => {
    // A ConfigMap in a namespace nobody records: its audit line is real, its object unknown.
    const other = `${ns}-unrecorded`;
    await ensureNamespace(admin, other);
    const created = await admin.json<{ metadata: { resourceVersion: string } }>(
      `/api/v1/namespaces/${other}/configmaps`,
      {
        method: "POST",
        body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "nobody-records-me" } },
      },
    );
    // A Secret: logged at Metadata, so its line carries no body (and no version to match).
    const secret = "s3cr3t-" + randomBytes(6).toString("hex");
    await write("alice", "POST", `/api/v1/namespaces/${ns}/secrets`, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "db" },
      stringData: { password: secret },
    });
    const lines = readFileSync(api.auditLogPath, "utf8").split("\n");
    const complete = (needle: string) =>
      lines.find(l => l.includes(needle) && l.includes('"stage":"ResponseComplete"'));
    const unknownLine = complete(`"resourceVersion":"${created.metadata.resourceVersion}"`);
    const secretLine = complete(`"namespace":"${ns}","name":"db"`);
    expect(unknownLine).toBeDefined();
    expect(secretLine).toBeDefined();
    expect(secretLine).not.toContain(secret);
    const file = join(dir, "crafted.log");
    writeFileSync(file, `${unknownLine}\n${secretLine}\n`);
    appendFileSync(file, '{"kind":"Event","auditID":\n');
    appendFileSync(file, `{"kind":"Event","x":"${"y".repeat(5 * 1024 * 1024)}"}\n`);
    const ing = new AuditIngestor(rec.journal, {
      clusterId,
      pendingMs: 0,
      maxLineBytes: 1024 * 1024,
    });
    const before = rec.journal.recordCount();
    const counts = await ing.importFile(file);
    expect(counts).toMatchObject({ malformed: 1, huge: 1, unmatched: 1, ignored: 1, matched: 0 });
    expect(rec.journal.recordCount()).toBe(before);
    // No audit correlation anywhere holds the Secret's value.
    const audits = allRecords(rec.journal).filter(r => r.type === "audit_correlation");
    expect(audits.length).toBeGreaterThan(0);
    expect(JSON.stringify(audits)).not.toContain(secret);
  });
});
