import type { KubeClient } from "../kube/client";
import type { Logger } from "../log/logger";
import { backoffDelay } from "./backoff";
import { LineSplitter } from "./line-splitter";
import { parseWatchLine } from "./parse";

const CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

export type CrdPhase = "ADDED" | "MODIFIED" | "DELETED";
type Named = { metadata?: { name?: string } };

/** A CRD to hand over to the recorder, and how it changed. */
export interface CrdStep {
  crd: unknown;
  phase: CrdPhase;
}

/**
 * What a list of every CRD hands over: each listed one (as MODIFIED, since the recorder cannot tell
 * what changed while nobody watched), then as DELETED each known one the list no longer holds, which
 * went away while the follower was not watching. `known` becomes the listed set.
 */
export function relist(known: Map<string, unknown>, items: readonly unknown[]): CrdStep[] {
  const steps: CrdStep[] = [];
  const listed = new Set<string>();
  for (const crd of items) {
    const name = (crd as Named).metadata?.name ?? "";
    listed.add(name);
    known.set(name, crd);
    steps.push({ crd, phase: "MODIFIED" });
  }
  for (const [name, crd] of [...known]) {
    if (listed.has(name)) continue;
    known.delete(name);
    steps.push({ crd, phase: "DELETED" });
  }
  return steps;
}

/**
 * What one line of the CRD watch hands over, updating `known`: nothing for a bookmark; an ERROR event
 * or a line that does not parse throws, because only a relist can tell what the follower missed.
 */
export function watchStep(known: Map<string, unknown>, line: string): CrdStep | null {
  const p = parseWatchLine(line);
  if (p.type === "BOOKMARK") return null;
  if (p.type === "malformed" || p.type === "ERROR") {
    throw new Error(`CRD watch: ${p.type === "ERROR" ? p.status.message : p.error}`);
  }
  const name = p.object.metadata.name ?? "";
  if (p.type === "DELETED") known.delete(name);
  else known.set(name, p.object);
  return { crd: p.object, phase: p.type };
}

/**
 * Follows CustomResourceDefinitions outside the cluster, where no Pepr Reconcile binding exists
 * (`krply record`): list, hand every CRD over, watch from the list's RV, and relist after any
 * failure. A relist hands over, as deleted, every CRD that went away while it was not watching.
 */
export class CrdFollower {
  private stopped = false;
  private abort: AbortController | null = null;
  private done: Promise<void> | null = null;
  private readonly known = new Map<string, unknown>();
  private wake: (() => void) | null = null;

  constructor(
    private readonly client: KubeClient,
    private readonly onCrd: (crd: unknown, phase: CrdPhase) => Promise<void>,
    private readonly log: Logger,
    private readonly backoff = { minMs: 500, maxMs: 30_000 },
  ) {}

  start(): void {
    this.done ??= this.loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abort?.abort(new Error("CRD follower stopped"));
    this.wake?.();
    await this.done;
  }

  private async loop(): Promise<void> {
    let attempt = 0;
    while (!this.stopped) {
      try {
        await this.cycle(() => (attempt = 0));
      } catch (err) {
        if (this.stopped) break;
        this.log.warn({ err }, "following CustomResourceDefinitions failed; relisting");
      }
      if (this.stopped) break;
      const ms = backoffDelay(attempt++, this.backoff, Math.random);
      await new Promise<void>(resolve => {
        const t = setTimeout(resolve, ms);
        this.wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
    }
  }

  private async cycle(healthy: () => void): Promise<void> {
    const ac = new AbortController();
    this.abort = ac;
    const list = await this.client.json<{
      metadata: { resourceVersion: string };
      items: unknown[];
    }>(CRD_PATH, { signal: ac.signal });
    for (const step of relist(this.known, list.items ?? [])) await this.hand(step.crd, step.phase);
    healthy();
    if (this.stopped) return;
    const res = await this.client.stream(
      CRD_PATH,
      {
        watch: "true",
        resourceVersion: list.metadata.resourceVersion,
        allowWatchBookmarks: "true",
      },
      ac.signal,
    );
    const splitter = new LineSplitter();
    try {
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        for (const line of splitter.push(chunk)) {
          const step = watchStep(this.known, line);
          if (step) await this.hand(step.crd, step.phase);
        }
      }
    } finally {
      res.body.destroy();
    }
  }

  private async hand(crd: unknown, phase: CrdPhase): Promise<void> {
    try {
      await this.onCrd(crd, phase);
    } catch (err) {
      this.log.warn({ err, phase }, "a CustomResourceDefinition could not be handled");
    }
  }
}
