// Every view of the web UI renders the real data of a journal recorded from a real kube-apiserver
// (test/support/ui-journal.ts), compared with the sidecar's own answers; the one gap is marked where
// it is and nowhere else; axe-core finds no serious or critical violation on any view.
import type { Page } from "playwright-core";
import { seriousAxeViolations } from "../support/browser";
import { openUiRig, type UiRig } from "../support/ui-sidecar";

let rig: UiRig;
let page: Page;

interface Window {
  streamId: string;
  from: string;
  to: string | null;
}
interface StreamReport {
  streamId: string;
  lastResourceVersion: string | null;
  gaps: Window[];
  downWindows: Window[];
  openGaps: number;
}

beforeAll(async () => {
  rig = await openUiRig();
  page = await rig.browser.page();
});

afterAll(async () => {
  await rig?.close();
});

/** Opens a view and waits until it has left its loading state. */
async function open(view: string, params: Record<string, string> = {}): Promise<void> {
  await page.goto(rig.url(view, params));
  await page.locator(`[data-testid="view-${view}"]`).waitFor();
  await page.locator('[data-testid="loading"]').waitFor({ state: "detached" });
}

/** The rows of a table as header → cell text, the way a reader sees them. */
function tableRows(selector: string): Promise<Record<string, string>[]> {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- DOM nodes: the tests compile without lib.dom
  return page.locator(selector).evaluate((table: any) => {
    const text = (n: { textContent: string | null }) => (n.textContent ?? "").trim();
    const heads: string[] = [...table.querySelectorAll("thead th")].map(text);
    return [...table.querySelectorAll("tbody tr")].map(tr =>
      Object.fromEntries([...tr.children].map((c, i) => [heads[i], text(c)])),
    );
  });
}

async function expectAccessible(): Promise<void> {
  expect(await seriousAxeViolations(page)).toEqual([]);
}

const streams = async () => (await rig.api<{ data: StreamReport[] }>("/v1/streams")).data;

describe("coverage", () => {
  it("shows every recorded stream with its gaps, down windows and completeness at the chosen time", async () => {
    const at = rig.journal.times.afterGap;
    await open("coverage", { at });
    const truth = await streams();
    const coverage = await rig.api<{
      data: { streams: { streamId: string; complete: boolean }[] };
    }>(`/v1/coverage?at=${at}`);
    const rows = page.locator('[data-testid="stream-row"]');
    const ids = await rows.evaluateAll(trs => trs.map(tr => tr.getAttribute("data-stream")));
    expect([...ids].sort()).toEqual(Object.values(rig.journal.streams).sort());
    const cells = await tableRows('[data-testid="coverage-matrix"]');
    for (const s of truth) {
      const i = ids.indexOf(s.streamId);
      const complete = coverage.data.streams.find(c => c.streamId === s.streamId)!.complete;
      expect({
        stream: s.streamId,
        gaps: cells[i]["Gaps (open)"],
        complete: cells[i]["Complete at time"],
      }).toEqual({
        stream: s.streamId,
        gaps: `${s.gaps.length} (${s.openGaps})`,
        complete: complete ? "complete" : "incomplete",
      });
      expect(cells[i]["Down windows"]).toBe(String(s.downWindows.length));
    }
    await expectAccessible();
  });

  it("marks the gap on the ConfigMap strip, at its time and on top, and nowhere else", async () => {
    await open("coverage", { at: rig.journal.times.afterGap });
    const gap = (await streams()).find(s => s.streamId === rig.journal.gapStreamId)!.gaps[0];
    const markers = page.locator('[data-testid="gap-marker"]');
    expect(await markers.count()).toBe(1);
    const m = markers.first();
    expect(await m.isVisible()).toBe(true);
    expect({
      stream: await m.getAttribute("data-stream"),
      from: await m.getAttribute("data-from"),
      to: await m.getAttribute("data-to"),
    }).toEqual({ stream: rig.journal.gapStreamId, from: gap.from, to: gap.to });
    // The marker sits inside the ConfigMap row, at the share of the strip its start has.
    const row = page.locator(
      `[data-testid="stream-row"][data-stream="${rig.journal.gapStreamId}"]`,
    );
    expect(await row.locator('[data-testid="gap-marker"]').count()).toBe(1);
    const strip = m.locator("xpath=..");
    const [sb, mb] = [await strip.boundingBox(), await m.boundingBox()];
    const times = await page.locator('[data-testid="coverage-summary"] time').allTextContents();
    const [from, to] = [Date.parse(times[times.length - 2]), Date.parse(times[times.length - 1])];
    const expectedLeft = sb!.x + (sb!.width * (Date.parse(gap.from) - from)) / (to - from);
    expect(Math.abs(mb!.x - expectedLeft)).toBeLessThan(sb!.width * 0.02);
    // Nothing covers it: the point at its centre is the marker itself (a down window spans it too).
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a DOM node, see tableRows
    const onTop = await m.evaluate((el: any) => {
      const r = el.getBoundingClientRect();
      return el.ownerDocument.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2) === el;
    });
    expect(onTop).toBe(true);
  });

  it("is complete before the gap, and names the ConfigMap stream incomplete inside it", async () => {
    await open("coverage", { at: rig.journal.times.beforeGap });
    const before = await tableRows('[data-testid="coverage-matrix"]');
    expect(before.map(r => r["Complete at time"])).toEqual(before.map(() => "complete"));
    await open("coverage", { at: rig.journal.times.inGap });
    const row = page.locator(
      `[data-testid="stream-row"][data-stream="${rig.journal.gapStreamId}"]`,
    );
    expect(await row.locator("td", { hasText: /^incomplete$/ }).count()).toBe(1);
    expect(
      await page.locator('[data-testid="coverage-banner"]').getAttribute("data-complete"),
    ).toBe("false");
  });
});

describe("stream health", () => {
  it("shows each stream's last RV, relists and down windows as the sidecar reports them", async () => {
    await open("streams");
    const truth = await streams();
    const rows = await tableRows('[data-testid="health-table"]');
    const ids = await page
      .locator('[data-testid="health-row"]')
      .evaluateAll(trs => trs.map(tr => tr.getAttribute("data-stream")));
    expect([...ids].sort()).toEqual(truth.map(s => s.streamId).sort());
    for (const s of truth) {
      const r = rows[ids.indexOf(s.streamId)];
      expect({ stream: s.streamId, rv: r["Last RV"], relists: r["Relists (gaps)"] }).toEqual({
        stream: s.streamId,
        rv: s.lastResourceVersion,
        relists: String(s.gaps.length),
      });
    }
    await expectAccessible();
  });

  it("pages a stream's records in journal order, with the gap record where the journal has it", async () => {
    const stream = rig.journal.gapStreamId;
    await open("streams", { stream });
    await page.locator('[data-testid="record-row"]').first().waitFor();
    const truth = await rig.api<{ data: { records: { type: string; ingestSeq: number }[] } }>(
      `/v1/events?stream=${encodeURIComponent(stream)}&objects=false&limit=100`,
    );
    const shown = await page
      .locator('[data-testid="record-row"]')
      .evaluateAll(trs => trs.map(tr => tr.getAttribute("data-type")));
    expect(shown).toEqual(truth.data.records.map(r => r.type));
    expect(shown.filter(t => t === "gap")).toHaveLength(1);
    await expectAccessible();
  });
});

describe("search", () => {
  it("finds when and where objects existed, with the one deleted inside the gap marked uncertain", async () => {
    await open("search", { name: "*" });
    await page.locator('[data-testid="search-row"]').first().waitFor();
    const answer = await rig.api<{
      data: {
        hits: { kind: string; namespace: string; name: string; ranges: { uncertain: boolean }[] }[];
        nextCursor: string | null;
      };
    }>("/v1/search?name=");
    // The journal is small: one page holds every object.
    expect(answer.data.nextCursor).toBeNull();
    const truth = { data: answer.data.hits };
    const rows = page.locator('[data-testid="search-row"]');
    expect(await rows.count()).toBe(truth.data.length);
    const names = await rows.locator("th").allTextContents();
    for (const f of truth.data) {
      const i = names.findIndex(n =>
        n.startsWith(`${f.kind} ${f.namespace ? `${f.namespace}/` : ""}${f.name} `),
      );
      expect({ object: `${f.kind}/${f.name}`, found: i >= 0 }).toEqual({
        object: `${f.kind}/${f.name}`,
        found: true,
      });
      const uncertain = await rows.nth(i).getByText("uncertain: a gap overlaps it").count();
      expect({ object: f.name, uncertain }).toEqual({
        object: f.name,
        uncertain: f.ranges.filter(r => r.uncertain).length,
      });
    }
    // The ConfigMap deleted while the recorder was down vanished in the gap: the UI says so.
    const old = truth.data.find(f => f.kind === "ConfigMap" && f.name === "old")!;
    expect(old.ranges.some(r => r.uncertain)).toBe(true);
    await expectAccessible();
  });

  it("pages the hits by cursor, each page deep-linkable, every object once", async () => {
    const truth = await rig.api<{
      data: { hits: { kind: string; namespace: string; name: string }[] };
    }>("/v1/search?name=");
    const seen: string[] = [];
    let url = rig.url("search", { name: "*", limit: "2" });
    for (let pages = 0; ; pages++) {
      expect(pages).toBeLessThan(truth.data.hits.length + 2);
      // A fresh load of each page's address: the page is its URL, not state left in the app.
      await page.goto("about:blank");
      await page.goto(url);
      await page.locator('[data-testid="view-search"]').waitFor();
      await page.locator('[data-testid="loading"]').waitFor({ state: "detached" });
      const rows = page.locator('[data-testid="search-row"] th');
      expect(await rows.count()).toBeLessThanOrEqual(2);
      for (const t of await rows.allTextContents()) seen.push(t.split(" ").slice(0, 2).join(" "));
      const next = page.getByRole("link", { name: "Next page" });
      if ((await next.count()) === 0) break;
      await expectAccessible();
      // The link's own address opens the next page, as a reader following it would.
      url = rig.url("search", {}).replace(/#.*$/, (await next.getAttribute("href")) ?? "");
    }
    expect(seen).toEqual(
      truth.data.hits.map(h => `${h.kind} ${h.namespace ? `${h.namespace}/` : ""}${h.name}`),
    );
  });
});

describe("snapshots", () => {
  it("lists stored snapshots with their completeness and compares two object by object", async () => {
    const take = (at: string, name: string) =>
      rig.api<{ data: { id: string } }>("/v1/snapshots", {
        method: "POST",
        body: JSON.stringify({ at, name }),
      });
    const a = (await take(rig.journal.times.beforeGap, "before-gap")).data.id;
    const b = (await take(rig.journal.times.afterGap, "after-relist")).data.id;
    await open("snapshots");
    const truth = await rig.api<{ data: { id: string; complete: boolean }[] }>("/v1/snapshots");
    const rows = await page
      .locator('[data-testid="snapshot-row"]')
      .evaluateAll(trs =>
        trs.map(tr => `${tr.getAttribute("data-id")} ${tr.getAttribute("data-complete")}`),
      );
    expect(rows.sort()).toEqual(truth.data.map(s => `${s.id} ${s.complete}`).sort());
    await expectAccessible();

    // Across the gap: "old" was deleted while the recorder was down, web-config and web changed.
    await open("snapshots", { a, b });
    await page.locator('[data-testid="snapshot-compare"]').waitFor();
    await page.locator('main#main[aria-busy="false"]').waitFor();
    const deltas = await tableRows('[data-testid="snapshot-deltas"]');
    const byObject = Object.fromEntries(deltas.map(d => [d.Object, d.Change]));
    expect(Object.keys(byObject)).toEqual(
      expect.arrayContaining([
        `ConfigMap ${rig.journal.namespace}/old`,
        `ConfigMap ${rig.journal.namespace}/web-config`,
        `Deployment ${rig.journal.namespace}/web`,
      ]),
    );
    expect(byObject[`ConfigMap ${rig.journal.namespace}/old`]).toMatch(/removed|deleted|gone/i);
    await expectAccessible();
  });
});
