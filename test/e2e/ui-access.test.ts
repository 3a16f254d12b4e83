// The web UI with authentication on (TokenReview and SubjectAccessReview against the shared real
// kube-apiserver): it asks for a token and keeps it in the tab's sessionStorage; the server's
// errors (403, 400, 404) are shown as errors, never as an empty table; and it works by keyboard.
import { randomBytes } from "node:crypto";
import type { Page } from "playwright-core";
import { clusterReviewApi, kubernetesAuthorizer } from "../../src/api";
import type { KubeClient } from "../../src/kube/client";
import { sharedApiServer } from "../apiserver/shared";
import { seriousAxeViolations } from "../support/browser";
import { clientOf, ensureNamespace, installReplayPlanCrd } from "../support/replay-fixtures";
import { openUiRig, type UiRig } from "../support/ui-sidecar";

const api = sharedApiServer();
const { admin: adminToken, nobody: nobodyToken } = api.tokens;
let reviews: Awaited<ReturnType<typeof clusterReviewApi>>;
let admin: KubeClient;
let rig: UiRig;

beforeAll(async () => {
  admin = await clientOf(api.kubeconfigs.admin);
  await installReplayPlanCrd(admin);
  reviews = await clusterReviewApi({ kubeconfig: api.kubeconfigs.admin });
  rig = await openUiRig({
    target: () => Promise.resolve(admin),
    over: { authorizer: kubernetesAuthorizer({ api: reviews.api }) },
    token: adminToken,
  });
});

afterAll(async () => {
  await rig?.close();
  await reviews?.close();
  await admin?.close();
});

// The page's own globals (document, sessionStorage): the tests compile without lib.dom.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Dom = any;

const prompt = (page: Page) => page.locator('[data-testid="token-prompt"]');
const storedToken = (page: Page) =>
  page.evaluate(() => (globalThis as Dom).sessionStorage.getItem("krply.token") as string | null);

async function settled(page: Page, view: string): Promise<void> {
  await page.locator(`[data-testid="view-${view}"]`).waitFor();
  await page.locator('main#main[aria-busy="false"]').waitFor();
}

/** A new tab that has given the admin token to the prompt. */
async function signedIn(view: string, params: Record<string, string> = {}): Promise<Page> {
  const page = await rig.browser.page();
  await page.goto(rig.url(view, params));
  await page.getByLabel("Bearer token").fill(adminToken);
  await page.getByRole("button", { name: "Use token" }).click();
  await settled(page, view);
  return page;
}

it("asks for a token, shows a 403 as an error, and keeps the accepted token in this tab's sessionStorage only", async () => {
  const page = await rig.browser.page();
  await page.goto(rig.url("coverage"));
  await prompt(page).waitFor();
  // The prompt takes focus in its labelled input, and nothing of the journal shows behind it.
  expect(await page.evaluate(() => (globalThis as Dom).document.activeElement.id as string)).toBe(
    "token-input",
  );
  expect(await page.locator('[data-testid="stream-row"]').count()).toBe(0);
  expect(await seriousAxeViolations(page)).toEqual([]);

  // A real user the API server knows but RBAC does not allow: the SubjectAccessReview's 403.
  await page.getByLabel("Bearer token").fill(nobodyToken);
  await page.getByRole("button", { name: "Use token" }).click();
  const error = page.locator('[data-testid="error"]');
  await error.waitFor();
  expect(await error.textContent()).toMatch(/403.*forbidden|forbidden.*403/s);
  expect(await page.locator('[data-testid="empty"], [data-testid="coverage-matrix"]').count()).toBe(
    0,
  );

  // Forget it; the next answer is a 401 again and the prompt returns. The admin's token works.
  await page.getByRole("button", { name: "Forget token" }).click();
  await prompt(page).waitFor();
  await page.getByLabel("Bearer token").fill(adminToken);
  await page.getByRole("button", { name: "Use token" }).click();
  await settled(page, "coverage");
  expect(await page.locator('[data-testid="stream-row"]').count()).toBe(
    Object.keys(rig.journal.streams).length,
  );
  expect(await storedToken(page)).toBe(adminToken);
  const persistent = await page.evaluate(() => {
    const g = globalThis as Dom;
    return { localStorage: g.localStorage.length as number, cookie: g.document.cookie as string };
  });
  expect(persistent).toEqual({ localStorage: 0, cookie: "" });

  // A reload keeps it (same tab); a new tab starts without it and asks again.
  await page.reload();
  await settled(page, "coverage");
  expect(await prompt(page).count()).toBe(0);
  const other = await rig.browser.page();
  await other.goto(rig.url("coverage"));
  await prompt(other).waitFor();
  expect(await storedToken(other)).toBeNull();
  await other.close();
  await page.close();
});

it("shows the server's 400 and 404 as errors, with the server's code and message", async () => {
  const page = await signedIn("coverage", { at: "garbage" });
  const bad = await fetch(`${rig.sidecar.url}/v1/coverage?at=garbage`, {
    headers: { authorization: `Bearer ${adminToken}` },
  });
  const body = (await bad.json()) as { error: { code: string; message: string } };
  expect(bad.status).toBe(400);
  const error = page.locator('[data-testid="error"]');
  expect(await error.getAttribute("role")).toBe("alert");
  const text = await error.textContent();
  expect(text).toContain(body.error.code);
  expect(text).toContain("HTTP 400");
  expect(await page.locator('[data-testid="empty"], [data-testid="coverage-matrix"]').count()).toBe(
    0,
  );

  await page.goto(rig.url("timeline", { kind: "nokind", name: "x", ns: rig.journal.namespace }));
  await settled(page, "timeline");
  expect(await error.textContent()).toMatch(/HTTP 404/);
  expect(await page.locator('[data-testid="empty"], [data-testid="timeline"]').count()).toBe(0);
  expect(await seriousAxeViolations(page)).toEqual([]);
  await page.close();
});

it("works by keyboard: skip link, views, search, timeline, diff, strip markers, and the confirm dialog", async () => {
  const page = await signedIn("coverage", { at: rig.journal.times.afterGap });
  const focused = () =>
    page.evaluate(() => {
      const el = (globalThis as Dom).document.activeElement;
      const text: string = (el.getAttribute("aria-label") ?? el.textContent ?? "").trim();
      return { tag: el.tagName as string, text };
    });
  // Focus at the top of the document, where a reader who just arrived with the keyboard starts
  // (a click on the token prompt's button left the starting point at the end of the page).
  const fromTop = () =>
    page.evaluate(() => {
      const body = (globalThis as Dom).document.body;
      body.setAttribute("tabindex", "-1");
      body.focus();
      body.removeAttribute("tabindex");
    });
  // Focus moves in the app's effects, a moment after the render: poll for it (up to 2 s).
  const focusSettles = async (want: { tag: string; text: string }) => {
    for (let i = 0; i < 100; i++) {
      const f = await focused();
      if (f.tag === want.tag && f.text === want.text) return f;
      await page.waitForTimeout(20);
    }
    return focused();
  };
  // The first Tab stop is the skip link; Enter moves focus to the main content.
  await fromTop();
  await page.keyboard.press("Tab");
  expect(await focused()).toEqual({ tag: "A", text: "Skip to content" });
  await page.keyboard.press("Enter");
  expect((await focused()).tag).toBe("MAIN");

  // The gap on the strip is a Tab stop that says what it is.
  let found = false;
  for (let i = 0; i < 40 && !found; i++) {
    await page.keyboard.press("Tab");
    found = /^gap from /.test((await focused()).text);
  }
  expect(found).toBe(true);

  // The views are links in the banner's navigation, in order, reached with Tab.
  await page.goto(rig.url("coverage"));
  await settled(page, "coverage");
  await fromTop();
  const order: string[] = [];
  for (let i = 0; i < 8; i++) {
    await page.keyboard.press("Tab");
    order.push((await focused()).text);
  }
  expect(order.slice(1)).toEqual([
    "Coverage",
    "Stream health",
    "Timeline",
    "Diff",
    "Snapshots",
    "Search",
    "Replay",
  ]);

  // Search → Timeline → Diff with the keyboard alone. locator.press focuses its element and then
  // sends the key, so the app moving focus to the content after a view change cannot race it.
  await page.getByRole("link", { name: "Search" }).press("Enter");
  await settled(page, "search");
  const prefix = page.getByLabel("Name prefix");
  await prefix.pressSequentially("web-config");
  await prefix.press("Enter");
  await page.locator('[data-testid="search-row"]').first().waitFor();
  await settled(page, "search");
  await page
    .locator('[data-testid="search-row"]')
    .getByRole("link", { name: "Timeline" })
    .press("Enter");
  await settled(page, "timeline");
  await page.getByRole("link", { name: "Diff with previous" }).first().press("Enter");
  await settled(page, "diff");
  expect(await page.locator('[data-testid="diff-field"]').count()).toBeGreaterThan(0);

  // The confirm dialog: focus starts on Cancel, Tab stays inside, Escape cancels and gives focus back.
  const dst = `ui-keys-${randomBytes(3).toString("hex")}`;
  await ensureNamespace(admin, dst);
  const made = await rig.api<{ data: { id: string } }>("/v1/replay-plans", {
    method: "POST",
    body: JSON.stringify({
      at: rig.journal.times.afterGap,
      namespaces: [rig.journal.namespace],
      namespaceMap: { [rig.journal.namespace]: dst },
    }),
  });
  await page.goto(rig.url("replay", { plan: made.data.id }));
  await settled(page, "replay");
  await page.getByRole("button", { name: "Dry run…" }).focus();
  await page.keyboard.press("Enter");
  const dialog = page.locator('[data-testid="confirm-dialog"]');
  await dialog.waitFor();
  expect(await focusSettles({ tag: "BUTTON", text: "Cancel" })).toEqual({
    tag: "BUTTON",
    text: "Cancel",
  });
  const inside = () =>
    dialog.evaluate((d: Dom) => d.contains(d.ownerDocument.activeElement) as boolean);
  for (let i = 0; i < 4; i++) {
    await page.keyboard.press("Tab");
    expect(await inside()).toBe(true);
  }
  await page.keyboard.press("Shift+Tab");
  expect(await inside()).toBe(true);
  await page.keyboard.press("Escape");
  await dialog.waitFor({ state: "detached" });
  expect(await focusSettles({ tag: "BUTTON", text: "Dry run…" })).toEqual({
    tag: "BUTTON",
    text: "Dry run…",
  });
  // Cancelled means nothing ran.
  const plan = await rig.api<{ data: { dryRun: unknown } }>(`/v1/replay-plans/${made.data.id}`);
  expect(plan.data.dryRun).toBeNull();
  await page.close();
});
