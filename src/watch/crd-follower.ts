import type { KubeClient } from "../kube/client";
import type { Logger } from "../log/logger";
import { backoffDelay } from "./backoff";
import { LineSplitter } from "./line-splitter";
import { parseWatchLine } from "./parse";

const CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

export type CrdPhase = "ADDED" | "MODIFIED" | "DELETED";
type Named = { metadata?: { name?: string } };

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
    const listed = new Set<string>();
    for (const crd of list.items ?? []) {
      const name = (crd as Named).metadata?.name ?? "";
      listed.add(name);
      this.known.set(name, crd);
      await this.hand(crd, "MODIFIED");
    }
    for (const [name, crd] of [...this.known]) {
      if (listed.has(name)) continue;
      this.known.delete(name);
      await this.hand(crd, "DELETED");
    }
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
          const p = parseWatchLine(line);
          if (p.type === "BOOKMARK") continue;
          if (p.type === "malformed" || p.type === "ERROR") {
            throw new Error(`CRD watch: ${p.type === "ERROR" ? p.status.message : p.error}`);
          }
          const name = p.object.metadata.name ?? "";
          if (p.type === "DELETED") this.known.delete(name);
          else this.known.set(name, p.object);
          await this.hand(p.object, p.type);
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
