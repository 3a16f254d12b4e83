// `npm run docs:screenshots`: screenshots of every web UI view for the README (docs/images/ui-*.png),
// taken in Debian's Chromium from the real fixture: a private kube-apiserver, the scripted workload
// with its real gap (test/support/ui-journal.ts, paced out so the strips show the history's shape),
// the sidecar serving the built UI, a plan dry-run against the same kube-apiserver.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { startApiServer as startKube } from "../test/apiserver";
import { launchBrowser } from "../test/support/browser";
import { tempJournalPath } from "../test/support/journal-fixtures";
import { clientOf, ensureNamespace, installReplayPlanCrd } from "../test/support/replay-fixtures";
import { recordUiJournal, UI_NS } from "../test/support/ui-journal";
import { startUiSidecar } from "../test/support/ui-sidecar";
import { buildWeb } from "../web/build";

const OUT = join(__dirname, "..", "docs", "images");
const RESTORE = "shop-restore";

async function main(): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  const kube = await startKube();
  const tmp = tempJournalPath("krply-screens-");
  const admin = await clientOf(kube.kubeconfigs.admin);
  const browser = await launchBrowser({ viewport: { width: 1280, height: 860 } });
  try {
    console.log("recording the scripted workload (about half a minute) ...");
    const meta = await recordUiJournal(kube, tmp.path, { pace: 12 });
    await installReplayPlanCrd(admin);
    await ensureNamespace(admin, RESTORE);
    const web = await buildWeb({ outDir: join(tmp.dir, "web") });
    const sidecar = await startUiSidecar(tmp.path, {
      target: () => Promise.resolve(admin),
      over: { uiDir: web.outDir },
    });
    const post = async <T>(path: string, body: object): Promise<T> => {
      const res = await fetch(`${sidecar.url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      if (res.status >= 300) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
      return ((await res.json()) as { data: T }).data;
    };
    const a = await post<{ id: string }>("/v1/snapshots", {
      at: meta.times.beforeGap,
      name: "before-gap",
    });
    const b = await post<{ id: string }>("/v1/snapshots", {
      at: meta.times.afterGap,
      name: "after-relist",
    });
    const plan = await post<{ id: string }>("/v1/replay-plans", {
      at: meta.times.afterGap,
      namespaces: [UI_NS],
      namespaceMap: { [UI_NS]: RESTORE },
      // The restore goes into another namespace of the same (recorded) cluster, on purpose.
      intoSourceCluster: true,
    });
    await post(`/v1/replay-plans/${plan.id}/dry-run`, {});

    const hash = (view: string, params: Record<string, string>) =>
      `${sidecar.url}/#/${view}?${new URLSearchParams(params).toString()}`;
    const shots: [string, string][] = [
      ["coverage", hash("coverage", { at: meta.times.afterGap })],
      ["streams", hash("streams", { stream: meta.gapStreamId })],
      ["timeline", hash("timeline", { kind: "configmap", ns: UI_NS, name: "web-config" })],
      [
        "diff",
        hash("diff", {
          kind: "deployment",
          ns: UI_NS,
          name: "web",
          a: meta.times.beforeGap,
          b: meta.times.afterGap,
        }),
      ],
      ["snapshots", hash("snapshots", { a: a.id, b: b.id })],
      ["search", hash("search", { name: "*" })],
      ["replay", hash("replay", { plan: plan.id })],
    ];
    const page = await browser.page();
    for (const [name, url] of shots) {
      await page.goto(url);
      await page.locator(`[data-testid="view-${name}"]`).waitFor();
      await page.locator('main#main[aria-busy="false"]').waitFor();
      const file = join(OUT, `ui-${name}.png`);
      await page.screenshot({ path: file });
      console.log(`wrote ${file}`);
    }
    await sidecar.close();
  } finally {
    await browser.close();
    await admin.close();
    await kube.dispose();
    tmp.cleanup();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
