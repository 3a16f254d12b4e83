// The click-through a person investigating makes, in Chromium against the sidecar over the recorded
// journal: find an object, open its timeline (the gap in place), open a diff, build a replay plan
// into a namespace of the shared kube-apiserver, dry-run it there for real, and read each object's
// verdict. Then the same journey by keyboard alone.
import { randomBytes } from "node:crypto";
import type { Page } from "playwright-core";
import type { KubeClient } from "../../src/kube/client";
import { sharedApiServer } from "../apiserver/shared";
import { seriousAxeViolations } from "../support/browser";
import { clientOf, ensureNamespace, installReplayPlanCrd } from "../support/replay-fixtures";
import { openUiRig, type UiRig } from "../support/ui-sidecar";

const target = `ui-replay-${randomBytes(3).toString("hex")}`;
let admin: KubeClient;
let rig: UiRig;
let page: Page;

interface HistoryEntry {
  kind: string;
  resourceVersion: string | null;
  observedAt: string;
}
interface Verdict {
  ref: { kind: string; namespace: string; name: string };
  verdict: string;
  message?: string;
}

beforeAll(async () => {
  admin = await clientOf(sharedApiServer().kubeconfigs.admin);
  await installReplayPlanCrd(admin);
  await ensureNamespace(admin, target);
  rig = await openUiRig({ target: () => Promise.resolve(admin) });
  page = await rig.browser.page();
});

afterAll(async () => {
  await rig?.close();
  await admin?.close();
});

/** Waits until the current view has every answer rendered. */
async function settled(view: string): Promise<void> {
  await page.locator(`[data-testid="view-${view}"]`).waitFor();
  await page.locator('main#main[aria-busy="false"]').waitFor();
}

const historyAnswer = (kind: string, name: string) =>
  rig.api<{
    data: { entries: HistoryEntry[] };
    coverage: { downWindows: { streamId: string; from: string }[] };
  }>(`/v1/objects/${kind}/${name}/history?namespace=${rig.journal.namespace}`);
const history = async (kind: string, name: string) =>
  (await historyAnswer(kind, name)).data.entries;

it("search → timeline (gap in place) → diff → build a plan → dry-run verdicts per object", async () => {
  // Pick the object: search by name prefix, then its Timeline link.
  await page.goto(rig.url("search", { name: "web" }));
  await settled("search");
  await page
    .locator('[data-testid="search-row"]', {
      hasText: `ConfigMap ${rig.journal.namespace}/web-config`,
    })
    .getByRole("link", { name: "Timeline" })
    .click();
  await settled("timeline");
  expect(await page.locator("h1").textContent()).toContain("web-config");

  // The timeline holds the recorded versions with their RVs, labelled as observed, and the gap
  // between the last version before it and the relist after it.
  const answer = await historyAnswer("configmap", "web-config");
  const truth = answer.data.entries;
  const entries = page.locator('[data-testid="timeline-entry"]');
  const shown = await entries.evaluateAll(lis =>
    lis.map(li => `${li.getAttribute("data-kind")}:${li.getAttribute("data-rv") ?? ""}`),
  );
  const expected = truth.map(e => `${e.kind}:${e.kind === "version" ? e.resourceVersion : ""}`);
  expect([expected, [...expected].reverse()]).toContainEqual(shown.filter(s => s !== "down:"));
  expect(shown.filter(s => s.startsWith("gap:"))).toHaveLength(1);
  // Each recorder down window the answer's coverage names is marked once, at its start.
  const downs = page.locator('[data-testid="timeline"] [data-testid="down-marker"]');
  expect(await downs.evaluateAll(ms => ms.map(m => m.getAttribute("data-from")))).toEqual(
    answer.coverage.downWindows.map(d => d.from),
  );
  expect(await entries.first().textContent()).toMatch(/observed/);
  expect(await page.locator('[data-testid="timeline"]').textContent()).toMatch(/editor/);
  const gap = page.locator('[data-testid="timeline"] [data-testid="gap-marker"]');
  expect(await gap.isVisible()).toBe(true);
  expect(await gap.getAttribute("data-stream")).toBe(rig.journal.gapStreamId);
  expect(await seriousAxeViolations(page)).toEqual([]);

  // Diff the edit that set data.mode to b with the version before it.
  const edit = truth.find(
    e => e.kind === "version" && e.resourceVersion !== truth[0].resourceVersion,
  )!;
  await page
    .locator(`[data-testid="timeline-entry"][data-rv="${edit.resourceVersion}"]`)
    .getByRole("link", { name: "Diff with previous" })
    .click();
  await settled("diff");
  const fields = page.locator('[data-testid="diff-field"]');
  const paths = await fields.evaluateAll(trs => trs.map(tr => tr.getAttribute("data-path")));
  expect(paths).toEqual(["data.mode"]);
  const cells = fields.first().locator("td");
  expect([await cells.nth(1).textContent(), await cells.nth(2).textContent()]).toEqual([
    expect.stringMatching(/^"?a"?$/),
    expect.stringMatching(/^"?b"?$/),
  ]);
  expect(await page.locator('[data-testid="diff-side-by-side"]').isVisible()).toBe(true);
  // Server metadata is hidden by default; the checkbox shows it (the RV changed between the two).
  await page.getByLabel("Show server metadata").check();
  await settled("diff");
  const all = await page
    .locator('[data-testid="diff-field"]')
    .evaluateAll(trs => trs.map(tr => tr.getAttribute("data-path")));
  expect(all).toEqual(expect.arrayContaining(["data.mode", "metadata.resourceVersion"]));
  expect(await seriousAxeViolations(page)).toEqual([]);

  // Build a plan of the namespace after the gap, into the target namespace of the shared server.
  await page
    .getByRole("navigation", { name: "Views" })
    .getByRole("link", { name: "Replay" })
    .click();
  await settled("replay");
  await page.getByRole("link", { name: "Build a plan" }).click();
  await page.getByLabel("At (ISO time)").fill(rig.journal.times.afterGap);
  await page.getByLabel("Source namespaces").fill(rig.journal.namespace);
  await page.getByLabel("Namespace map").fill(`${rig.journal.namespace}=${target}`);
  await page.getByRole("button", { name: "Build plan" }).click();
  await page.waitForURL(/#\/replay\?plan=/);
  await settled("replay");
  const id = new URL(page.url().replace("#/", "")).searchParams.get("plan")!;
  const stored = await rig.api<{ data: { plan: { objects: unknown[] } } }>(
    `/v1/replay-plans/${id}`,
  );
  const rows = page.locator('[data-testid="verdict"]');
  expect(await rows.count()).toBe(stored.data.plan.objects.length);
  expect(await rows.evaluateAll(trs => trs.map(tr => tr.getAttribute("data-verdict")))).toEqual(
    stored.data.plan.objects.map(() => "none"),
  );

  // Dry run: the button asks first, then the sidecar dry-runs every object on the real server.
  await page.getByRole("button", { name: "Dry run…" }).click();
  const dialog = page.locator('[data-testid="confirm-dialog"]');
  expect(await dialog.isVisible()).toBe(true);
  await dialog.getByRole("button", { name: "Confirm dry run" }).click();
  await page.locator('[data-testid="action-result"]').waitFor();
  await settled("replay");
  const after = await rig.api<{ data: { dryRun: { verdicts: Verdict[] } } }>(
    `/v1/replay-plans/${id}`,
  );
  const verdicts = after.data.dryRun.verdicts;
  expect(verdicts.length).toBe(stored.data.plan.objects.length);
  const ui = await rows.evaluateAll(trs =>
    trs.map(tr => [tr.getAttribute("data-object") ?? "", tr.getAttribute("data-verdict") ?? ""]),
  );
  expect(ui.map(([, v]) => v).sort()).toEqual(verdicts.map(v => v.verdict).sort());
  expect(ui.every(([o]) => o.includes(target))).toBe(true);
  // The target namespace is new and empty, so every object would be written without a conflict.
  // Any verdict outside that set is listed whole: a failure shows the object and its message.
  const written = ["would-create", "would-change", "unchanged"];
  expect(verdicts.filter(v => !written.includes(v.verdict))).toEqual([]);
  expect(await page.locator('[data-testid="dry-run-status"]').getAttribute("data-state")).toBe(
    "ok",
  );
  expect(await seriousAxeViolations(page)).toEqual([]);
});

it("pages a timeline from the server: each page deep-linked, the gap on one page only", async () => {
  const truth = await history("configmap", "web-config");
  const versions = truth.filter(e => e.kind === "version").length;
  expect(versions).toBeGreaterThan(2);
  await page.goto(
    rig.url("timeline", {
      kind: "configmap",
      name: "web-config",
      ns: rig.journal.namespace,
      limit: "2",
    }),
  );
  await settled("timeline");
  const seen: string[] = [];
  const gapPages: number[] = [];
  const urls: string[] = [];
  for (let n = 1; n <= versions; n++) {
    const shown = await page
      .locator('[data-testid="timeline-entry"]')
      .evaluateAll(lis =>
        lis.map(li => `${li.getAttribute("data-kind")}:${li.getAttribute("data-rv") ?? ""}`),
      );
    expect(shown.filter(s => s.startsWith("version:")).length).toBeLessThanOrEqual(2);
    seen.push(...shown.filter(s => s !== "down:"));
    if (shown.includes("gap:")) gapPages.push(n);
    urls.push(page.url());
    const next = page.getByRole("navigation", { name: "Timeline pages (bottom)" });
    const link = next.getByRole("link", { name: "Next page" });
    if ((await link.count()) === 0) break;
    await link.click();
    await settled("timeline");
  }
  expect(seen).toEqual(
    truth.map(e => `${e.kind}:${e.kind === "version" ? e.resourceVersion : ""}`),
  );
  expect(gapPages).toHaveLength(1);
  expect(urls.length).toBe(Math.ceil(versions / 2));
  expect(await seriousAxeViolations(page)).toEqual([]);
  // A page's URL holds its cursor: opened afresh it shows that page; "Previous page" goes back.
  const fresh = await rig.browser.page();
  await fresh.goto(urls[1]);
  await fresh.locator('main#main[aria-busy="false"]').waitFor();
  await fresh.locator('[data-testid="timeline"]').waitFor();
  expect(await fresh.locator('[data-testid="timeline-entry"][data-kind="version"]').count()).toBe(
    Math.min(2, versions - 2),
  );
  await fresh
    .getByRole("navigation", { name: "Timeline pages (top)" })
    .getByRole("link", { name: "Previous page" })
    .click();
  await fresh.locator('main#main[aria-busy="false"]').waitFor();
  const back = await fresh
    .locator('[data-testid="timeline-entry"][data-kind="version"]')
    .evaluateAll(lis => lis.map(li => `version:${li.getAttribute("data-rv")}`));
  expect(back).toEqual(seen.filter(s => s.startsWith("version:")).slice(0, 2));
  await fresh.close();
});

it("the deployment's timeline has no gap marker: the gap is on the ConfigMap stream only", async () => {
  await page.goto(
    rig.url("timeline", { kind: "deployment", name: "web", ns: rig.journal.namespace }),
  );
  await settled("timeline");
  const truth = await history("deployment", "web");
  const versions = page.locator('[data-testid="timeline-entry"][data-kind="version"]');
  expect(await versions.count()).toBe(truth.filter(e => e.kind === "version").length);
  expect(await page.locator('[data-testid="gap-marker"]').count()).toBe(0);
  expect(await page.locator('[data-testid="timeline"]').textContent()).toMatch(/kubectl-scale/);
});
