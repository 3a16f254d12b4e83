import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { kubeRequest, startApiServer, type ApiServer } from "../apiserver";
import { byKind, helmBinary, render, type Doc } from "./chart-checks";
import {
  expectGone,
  expectInstalled,
  expectInstancesListable,
  getObject,
  KRPLY_OBJECTS,
} from "./install-checks";

// The README's install section, run as written against an API server of its own (the shared one runs
// `pepr dev`, whose webhook has the same name): install, upgrade, uninstall, re-install, and the
// `npm run deploy` path, each checked by install-checks.ts. The commands come from README.md, so the
// README cannot drift from what is tested.

const root = join(__dirname, "..", "..");
const NS = "pepr-system";
const CLAIM = `/api/v1/namespaces/${NS}/persistentvolumeclaims/pepr-krply-journal`;
const KEY = `/api/v1/namespaces/${NS}/secrets/pepr-krply-digest-key`;
const MONITOR = `/apis/monitoring.coreos.com/v1/namespaces/${NS}/servicemonitors/pepr-krply-krply`;

/** Splits a shell line into words, honouring single and double quotes (no expansions). */
export function words(line: string): string[] {
  const out: string[] = [];
  const re = /'([^']*)'|"([^"]*)"|(\S+)/g;
  for (let m = re.exec(line); m; m = re.exec(line)) out.push(m[1] ?? m[2] ?? m[3]);
  return out;
}

/** The commands in the fenced blocks of README's "Install in a cluster" section, in order. */
export function readmeCommands(text = readFileSync(join(root, "README.md"), "utf8")): string[][] {
  const start = text.indexOf("## Install in a cluster");
  if (start < 0) throw new Error("README.md has no 'Install in a cluster' section");
  const end = text.indexOf("\n## ", start + 1);
  const section = text.slice(start, end < 0 ? undefined : end);
  const blocks = [...section.matchAll(/```[a-z]*\n([\s\S]*?)```/g)].map(m => m[1]);
  return blocks
    .flatMap(b => b.replace(/\\\n\s*/g, " ").split("\n"))
    .map(l => l.trim())
    .filter(l => l !== "")
    .map(words);
}

/** The one README command that starts with these words. */
function command(...prefix: string[]): string[] {
  const found = readmeCommands().filter(c => prefix.every((p, i) => c[i] === p));
  if (found.length === 0)
    throw new Error(`README.md's install section has no "${prefix.join(" ")}"`);
  return found[0];
}

const PLURALS: Record<string, string> = { pvc: "persistentvolumeclaims", secret: "secrets" };

/** Describes every suite over a build output that build.test.ts has built. */
export function describeLifecycle(): void {
  describe("the README's install section, run against a clean API server", () => {
    let api: ApiServer;
    let home = "";
    const env = () => ({
      ...process.env,
      KUBECONFIG: api.kubeconfigs.admin,
      // helm's own state stays out of the user's home.
      HELM_CACHE_HOME: join(home, "cache"),
      HELM_CONFIG_HOME: join(home, "config"),
      HELM_DATA_HOME: join(home, "data"),
    });

    /** Runs a README command as written: helm and npm for real; kubectl delete through the API. */
    async function run(argv: string[]): Promise<string> {
      const [tool, ...args] = argv;
      if (tool === "helm" || tool === "npm") {
        return execFileSync(tool === "helm" ? helmBinary() : "npm", args, {
          cwd: root,
          env: env(),
          encoding: "utf8",
          stdio: "pipe",
          timeout: 240_000,
        });
      }
      const [flag, ns, verb, ...targets] = args;
      if (tool !== "kubectl" || flag !== "-n" || verb !== "delete") {
        throw new Error(`the test cannot run README's "${argv.join(" ")}"`);
      }
      for (const target of targets) {
        const [kind, name] = target.split("/");
        const path = `/api/v1/namespaces/${ns}/${PLURALS[kind]}/${name}`;
        const res = await kubeRequest(api.info, "admin", "DELETE", path);
        if (res.status !== 200) throw new Error(`DELETE ${path}: HTTP ${res.status}`);
      }
      return "";
    }

    beforeAll(async () => {
      home = mkdtempSync(join(tmpdir(), "krply-helm-"));
      api = await startApiServer();
    }, 300_000);
    afterAll(async () => {
      await api?.dispose();
      if (home) rmSync(home, { recursive: true, force: true });
    });

    it("installs with README's helm command into the release namespace it names", async () => {
      const install = command("helm", "install");
      expect(install).toEqual(expect.arrayContaining(["-n", NS, "--create-namespace"]));
      await run(install);
      const releases = JSON.parse(await run(["helm", "list", "-n", NS, "-o", "json"])) as Doc[];
      expect(releases.map(r => [r.name, r.namespace, r.status])).toEqual([
        ["krply", NS, "deployed"],
      ]);
      await expectInstalled(api, { digestKey: true });
      const claim = await getObject(api, CLAIM);
      expect(claim?.spec.resources.requests.storage).toBe("20Gi");
    }, 300_000);

    it("keeps the journal's PVC (same uid) and the digest key (same data) across README's upgrade", async () => {
      const before = { claim: await getObject(api, CLAIM), key: await getObject(api, KEY) };
      expect(await run(command("helm", "upgrade"))).toContain("has been upgraded");
      const after = { claim: await getObject(api, CLAIM), key: await getObject(api, KEY) };
      expect(after.claim?.metadata.uid).toBe(before.claim?.metadata.uid);
      expect(after.key?.data).toEqual(before.key?.data);
      await expectInstalled(api, { digestKey: true });
    }, 300_000);

    it("installs the ServiceMonitor where its CRD is, and the server keeps every field", async () => {
      const crd = parse(
        readFileSync(join(__dirname, "fixtures", "servicemonitor-crd.yaml"), "utf8"),
      ) as Doc;
      const crdPath = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
      expect((await kubeRequest(api.info, "admin", "POST", crdPath, crd)).status).toBe(201);
      await waitEstablished(api, `${crdPath}/${crd.metadata.name}`);
      const upgrade = [...command("helm", "upgrade"), "--set", "krply.serviceMonitor.enabled=true"];
      await run(upgrade);
      const stored = await getObject(api, MONITOR);
      const [rendered] = byKind(
        render("--set", "krply.serviceMonitor.enabled=true"),
        "ServiceMonitor",
      );
      expect(stored?.spec).toEqual(rendered.spec);
      expect(stored?.spec.endpoints.map((e: Doc) => e.port)).toEqual(["http", "recorder-metrics"]);
    }, 300_000);

    it("uninstalls all but the PVC and the digest key, and a re-install resumes them", async () => {
      const kept = { claim: await getObject(api, CLAIM), key: await getObject(api, KEY) };
      await expectInstancesListable(api);
      await run(command("helm", "uninstall"));
      await expectGone(api, [...KRPLY_OBJECTS.filter(o => !o.kept).map(o => o.path), MONITOR]);
      expect((await getObject(api, CLAIM))?.metadata.uid).toBe(kept.claim?.metadata.uid);
      expect((await getObject(api, KEY))?.data).toEqual(kept.key?.data);

      await run(command("helm", "install"));
      await expectInstalled(api, { digestKey: true });
      expect((await getObject(api, CLAIM))?.metadata.uid).toBe(kept.claim?.metadata.uid);
      expect((await getObject(api, KEY))?.data).toEqual(kept.key?.data);
    }, 300_000);

    it("`npm run deploy` applies the same objects, checked by the same assertions", async () => {
      await expectInstancesListable(api);
      await run(command("helm", "uninstall"));
      await run(command("kubectl", "-n", NS, "delete"));
      // The harness runs no controller-manager, whose pvc-protection controller lifts this finalizer
      // once no pod uses the claim (none runs here); the test does what it would.
      const lifted = await kubeRequest(api.info, "admin", "PATCH", CLAIM, {
        metadata: { finalizers: null },
      });
      expect([200, 404]).toContain(lifted.status);
      await expectGone(
        api,
        KRPLY_OBJECTS.map(o => o.path),
      );

      const deploy = command("npm", "run", "deploy");
      expect(await run(deploy)).toMatch(/objects applied/);
      await expectInstalled(api, { digestKey: false });
      // A second apply changes nothing and fails nothing (server-side apply is idempotent).
      const claim = await getObject(api, CLAIM);
      await run(deploy);
      expect((await getObject(api, CLAIM))?.metadata.uid).toBe(claim?.metadata.uid);
    }, 300_000);
  });
}

async function waitEstablished(api: ApiServer, path: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const crd = await getObject(api, path);
    const ok = (crd?.status?.conditions ?? []).some(
      (c: Doc) => c.type === "Established" && c.status === "True",
    );
    if (ok) return;
    await new Promise(r => setTimeout(r, 250));
  }
  throw new Error(`${path} was not Established after ${timeoutMs} ms`);
}
