// Debian's Chromium driven by playwright-core, for the web UI tests, the screenshot script and
// bench/ui.ts. playwright-core downloads no browser: it launches the system one (installed by
// .ci/install-chromium), headless, with a fresh profile in a temp dir that close() removes.
import { accessSync, constants, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";

/** Where Debian puts its Chromium; KRPLY_CHROMIUM names another binary. */
export const DEFAULT_CHROMIUM = "/usr/bin/chromium";

/**
 * Flags every launch uses: no sandbox (CI containers run as root), no GPU, and nothing that reaches
 * the network on its own, so a test only ever talks to 127.0.0.1.
 */
export const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-quic",
  "--no-first-run",
  "--disable-component-update",
  "--disable-sync",
];

export interface TestBrowser {
  browser: BrowserContext;
  /** A new tab in the one context of this browser. */
  page(): Promise<Page>;
  /** Closes Chromium and removes its profile dir. */
  close(): Promise<void>;
}

/** The Chromium binary to launch, or an error that says how to install it. */
export function chromiumPath(env: NodeJS.ProcessEnv = process.env): string {
  const path = env.KRPLY_CHROMIUM || DEFAULT_CHROMIUM;
  try {
    accessSync(path, constants.X_OK);
  } catch (err) {
    throw new Error(
      `Chromium not found at ${path}${env.KRPLY_CHROMIUM ? " (KRPLY_CHROMIUM)" : ""}. ` +
        "The web UI tests drive Debian's Chromium: run .ci/install-chromium (apt-get install chromium), " +
        "or set KRPLY_CHROMIUM to a Chromium binary.",
      { cause: err },
    );
  }
  return path;
}

/**
 * Launches Chromium with a fresh user-data-dir. Playwright's persistent context is the launch that
 * takes a user-data-dir; it gives one context, which is what one test file needs.
 */
export async function launchBrowser(
  opts: { viewport?: { width: number; height: number } } = {},
): Promise<TestBrowser> {
  const executablePath = chromiumPath();
  const profile = mkdtempSync(join(tmpdir(), "krply-chromium-"));
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath,
      // playwright-core adds its own --headless; ours stays in the list so the flags are visible here.
      headless: true,
      args: CHROMIUM_FLAGS,
      viewport: opts.viewport ?? { width: 1280, height: 800 },
      // The UI must not depend on a locale or time zone the machine happens to have.
      locale: "en-US",
      timezoneId: "UTC",
    });
  } catch (err) {
    rmSync(profile, { recursive: true, force: true });
    throw new Error(`Chromium at ${executablePath} did not start: ${(err as Error).message}`, {
      cause: err,
    });
  }
  return {
    browser: context,
    page: () => context.newPage(),
    close: async () => {
      await context.close().catch(() => undefined);
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** One axe-core result that matters: its rule, impact and the elements it names. */
export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

let axeSource: string | undefined;

interface AxeResults {
  violations: { id: string; impact: string | null; help: string; nodes: { target: unknown[] }[] }[];
}

/**
 * Runs axe-core inside the page and returns its serious and critical violations. The source goes in
 * through the DevTools protocol (page.evaluate), not a <script> tag: the UI's CSP allows only its own
 * scripts, and the tests keep that CSP on.
 */
export async function seriousAxeViolations(page: Page): Promise<AxeViolation[]> {
  axeSource ??= readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");
  await page.evaluate(axeSource);
  const r = await page.evaluate<AxeResults>("axe.run(document, { resultTypes: ['violations'] })");
  return r.violations
    .filter(v => v.impact === "serious" || v.impact === "critical")
    .map(v => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      targets: v.nodes.map(n => n.target.map(String).join(" ")),
    }));
}
