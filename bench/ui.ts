// Web UI benchmark: Chromium (playwright-core) loads the timeline of an object with 5,000 versions
// and the coverage view of 300 streams from the built sidecar over a 1M-event journal
// (bench/lib-ui-data.ts). Per view: time to first content (the first row or entry in the DOM) and
// time to fully rendered (the view's last answer rendered, main[aria-busy=false], then two frames),
// both from navigation start. Target (issue 17): under 1 s each.
// Baselines measured in this run, in the same browser: a blank page load (navigation to the
// sidecar's /v1/health), and the raw fetch of the very requests the view made (recorded from the
// page's network, then fetched and parsed in a page of the same origin, in parallel as the view does).
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { SIDECAR_NODE_FLAGS } from "../deploy/finalize/objects";
import { openJournal, openJournalView } from "../src/journal";
import { freePort } from "../test/support/built-cli";
import { launchBrowser } from "../test/support/browser";
import { buildWeb } from "../web/build";
import { buildUiBenchJournal, HOT, UI_BENCH_SHAPE } from "./lib-ui-data";
import { wholeFlag } from "./lib-flags";

const ROOT = join(__dirname, "..");

/** The bench journal, built once per shape and kept in the temp dir (`--fresh` rebuilds it). */
function journalPath(events: number, fresh: boolean): string {
  const path = join(tmpdir(), `krply-bench-ui-${events}-s${UI_BENCH_SHAPE.seed}.db`);
  if (fresh) for (const p of [path, `${path}-wal`, `${path}-shm`]) rmSync(p, { force: true });
  if (!existsSync(path)) {
    console.log(`building ${events} records over 300 streams at ${path} ...`);
    const t0 = Date.now();
    const hotVersions = Math.min(UI_BENCH_SHAPE.hotVersions, Math.floor(events / 20));
    buildUiBenchJournal(path, { ...UI_BENCH_SHAPE, events, hotVersions });
    console.log(`built in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  }
  // Writable once, so a journal made by an older krply is migrated before it is measured.
  openJournal(path).close();
  return path;
}

async function startSidecar(
  path: string,
  env: Record<string, string> = {},
  build = true,
): Promise<{ url: string; child: ChildProcess }> {
  // The bundles the container runs, built now from this checkout; the sidecar serves web/dist.
  if (build) {
    execFileSync("npm", ["run", "build:api"], { cwd: ROOT, stdio: "ignore" });
    await buildWeb();
  }
  const port = await freePort();
  // With the flags the deployment gives it (deploy/finalize/objects.ts).
  const args = [...SIDECAR_NODE_FLAGS, join(ROOT, "dist", "api", "main.js")];
  const child = spawn(process.execPath, args, {
    env: {
      ...process.env,
      KRPLY_JOURNAL: path,
      KRPLY_API_AUTH: "none",
      KRPLY_API_HOST: "127.0.0.1",
      KRPLY_API_PORT: String(port),
      KRPLY_API_QUERY_TIMEOUT_MS: "60000",
      KRPLY_LOG_LEVEL: "warn",
      ...env,
    },
    stdio: ["ignore", "inherit", "inherit"],
  });
  const url = `http://127.0.0.1:${port}`;
  for (const deadline = Date.now() + 60_000; ; ) {
    if (child.exitCode !== null) throw new Error(`sidecar exited ${child.exitCode}`);
    const ok = await fetch(`${url}/v1/ready`).then(
      r => r.status === 200,
      () => false,
    );
    if (ok) return { url, child };
    if (Date.now() > deadline) throw new Error("sidecar not ready after 60 s");
    await new Promise(r => setTimeout(r, 200));
  }
}

interface Marks {
  first: number;
  ready: number;
}

/**
 * In-page marks, installed before the app's code runs: a MutationObserver notes when the first
 * item appears and when main turns aria-busy=false with the items there; "ready" is taken two
 * animation frames later, when that DOM has been painted.
 */
function markScript(item: string, min: number): string {
  return `(() => {
    const marks = (window.__krplyMarks = { first: null, ready: null });
    let done = false;
    const check = () => {
      if (done) return;
      const n = document.querySelectorAll(${JSON.stringify(item)}).length;
      if (marks.first === null && n > 0) marks.first = performance.now();
      const main = document.querySelector("main#main");
      if (n >= ${min} && main && main.getAttribute("aria-busy") === "false") {
        done = true;
        requestAnimationFrame(() => requestAnimationFrame(() => { marks.ready = performance.now(); }));
      }
    };
    new MutationObserver(check).observe(document, { childList: true, subtree: true, attributes: true });
  })();`;
}

async function measureView(
  page: Page,
  url: string,
  item: string,
  min: number,
): Promise<Marks & { requests: string[] }> {
  const requests: string[] = [];
  const onRequest = (r: { url(): string }) => {
    if (new URL(r.url()).pathname.startsWith("/v1/")) requests.push(r.url());
  };
  page.on("request", onRequest);
  await page.addInitScript({ content: markScript(item, min) });
  await page.goto(url);
  // A function, not a string: the UI's CSP forbids eval, which a string predicate would need.
  await page.waitForFunction(
    () => {
      const m = (globalThis as { __krplyMarks?: { ready: number | null } }).__krplyMarks;
      return m !== undefined && m.ready !== null;
    },
    null,
    { timeout: 120_000, polling: 50 },
  );
  page.off("request", onRequest);
  const marks = (await page.evaluate("window.__krplyMarks")) as Marks;
  return { ...marks, requests };
}

/** The blank page load: navigation start to load end of a tiny answer from the same sidecar. */
async function blankLoad(page: Page, url: string): Promise<number> {
  await page.goto(`${url}/v1/health`);
  return page.evaluate<number>("performance.getEntriesByType('navigation')[0].loadEventEnd");
}

/** The raw fetch of the same requests, in parallel, each body parsed as JSON. */
async function rawFetch(page: Page, requests: string[]): Promise<number> {
  // Runs in the page: fetch and performance are the page's (the bench compiles without lib.dom).
  return page.evaluate(async (urls: string[]) => {
    const g = globalThis as unknown as {
      performance: { now(): number };
      fetch(u: string): Promise<{ json(): Promise<unknown> }>;
    };
    const t0 = g.performance.now();
    await Promise.all(urls.map(u => g.fetch(u).then(r => r.json())));
    return g.performance.now() - t0;
  }, requests);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (ms: number) => `${ms.toFixed(0)} ms`;

export async function main(args: string[]): Promise<void> {
  const events = wholeFlag(args, "events", UI_BENCH_SHAPE.events);
  const runs = wholeFlag(args, "runs", 7);
  const path = journalPath(events, args.includes("--fresh"));
  const view = openJournalView(path);
  const shape = { records: view.recordCount(), streams: view.streams().length };
  view.close();
  console.log(`journal: ${shape.records} records, ${shape.streams} streams`);
  const sidecar = await startSidecar(path);
  // The same sidecar keeping no answers (history or events pages): every load of the timeline builds its page.
  const uncached = await startSidecar(path, { KRPLY_API_ANSWER_CACHE_MIB: "0" }, false);
  const browser = await launchBrowser();
  try {
    const timelineHash = `/#/timeline?kind=${HOT.kind}&name=${HOT.name}&ns=${HOT.namespace}`;
    const views = [
      {
        name: `timeline of ${HOT.kind} ${HOT.namespace}/${HOT.name}`,
        url: `${sidecar.url}${timelineHash}`,
        item: '[data-testid="timeline-entry"]',
        min: 1,
      },
      {
        name: `timeline of ${HOT.kind} ${HOT.namespace}/${HOT.name}, answer cache off`,
        url: `${uncached.url}${timelineHash}`,
        item: '[data-testid="timeline-entry"]',
        min: 1,
      },
      {
        name: `coverage of ${shape.streams} streams`,
        url: `${sidecar.url}/#/coverage`,
        item: '[data-testid="stream-row"]',
        min: shape.streams,
      },
    ];
    for (const v of views) {
      const firsts: number[] = [];
      const readys: number[] = [];
      const blanks: number[] = [];
      const raws: number[] = [];
      let cold: Marks | null = null;
      let total = "";
      let requests: string[] = [];
      for (let i = 0; i <= runs; i++) {
        const page = await browser.page();
        const m = await measureView(page, v.url, v.item, v.min);
        if (i === 0) {
          // The first load compiles the bundle and warms the sidecar's caches: reported apart.
          cold = m;
          requests = m.requests.map(u =>
            decodeURIComponent(new URL(u).pathname + new URL(u).search),
          );
          total =
            (await page
              .locator('[data-testid="timeline-total"]')
              .textContent()
              .catch(() => null)) ?? "";
        } else {
          firsts.push(m.first);
          readys.push(m.ready);
          blanks.push(await blankLoad(page, new URL(v.url).origin));
          raws.push(await rawFetch(page, m.requests));
        }
        await page.close();
      }
      const base = median(blanks) + median(raws);
      console.log(`\n${v.name}${total ? ` (${total})` : ""}`);
      console.log(
        `  cold first load: first content ${fmt(cold!.first)}, fully rendered ${fmt(cold!.ready)}`,
      );
      console.log(
        `  warm, median of ${runs} (max): first content ${fmt(median(firsts))} (${fmt(Math.max(...firsts))}), ` +
          `fully rendered ${fmt(median(readys))} (${fmt(Math.max(...readys))})  target < 1000 ms: ` +
          (median(firsts) < 1000 && median(readys) < 1000 ? "MET (medians)" : "not met"),
      );
      console.log(`  requests of one load: ${requests.join(", ")}`);
      console.log(
        `  baseline: blank page load ${fmt(median(blanks))}, raw fetch of the view's requests ${fmt(median(raws))}`,
      );
      console.log(
        `  ratio: fully rendered / (blank load + raw fetch) = ${(median(readys) / base).toFixed(2)}x; ` +
          `first content / raw fetch = ${(median(firsts) / median(raws)).toFixed(2)}x`,
      );
    }
  } finally {
    await browser.close();
    sidecar.child.kill("SIGTERM");
    uncached.child.kill("SIGTERM");
  }
}
