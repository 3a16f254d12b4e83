// The UI test rig end to end, before any view: Debian's Chromium (playwright-core) talks to the real
// sidecar over the journal recorded from a real kube-apiserver, and what the browser receives holds
// the fixture's one gap, on the ConfigMap stream only.
import type { ApiServer } from "../../src/api";
import { launchBrowser, type TestBrowser } from "../support/browser";
import { uiJournal, type UiJournal } from "../support/ui-journal";
import { startUiSidecar } from "../support/ui-sidecar";

let browser: TestBrowser;
let journal: UiJournal;
let sidecar: ApiServer;

beforeAll(async () => {
  [browser, journal] = await Promise.all([launchBrowser(), uiJournal()]);
  sidecar = await startUiSidecar(journal.path);
});

afterAll(async () => {
  await browser?.close();
  await sidecar?.close();
  journal?.cleanup();
});

it("the browser reads the recorded streams from the sidecar, with the gap on the ConfigMap stream only", async () => {
  const page = await browser.page();
  const res = await page.goto(
    `${sidecar.url}/v1/streams?cluster=${encodeURIComponent(journal.clusterId)}`,
  );
  expect(res?.status()).toBe(200);
  const body = JSON.parse(await page.locator("body").innerText()) as {
    data: { streamId: string; baselinePresent: boolean; gaps: unknown[] }[];
  };
  const gaps = Object.fromEntries(body.data.map(s => [s.streamId, s.gaps.length]));
  expect(gaps).toEqual({
    [journal.streams.configmaps]: 1,
    [journal.streams.services]: 0,
    [journal.streams.deployments]: 0,
    [journal.streams.namespaces]: 0,
  });
  expect(body.data.every(s => s.baselinePresent)).toBe(true);
  await page.close();
});
