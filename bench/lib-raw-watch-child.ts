// The raw watch client of bench/scale.ts, in a process of its own so that neither the bench's writers
// nor the recorder's work delay its clock: it watches the given collections from their current RV and
// prints "<rv> <ms since epoch>" for every event as its line arrives, and nothing else. No journal,
// no decoding beyond the RV: what it sees is the API server's own watch delivery.
// argv: <kubeconfig> <collection path>...
import { KubeClient, loadKubeConfig } from "../src/kube/client";
import { ApiError } from "../src/kube/errors";
import { LineSplitter } from "../src/watch/line-splitter";

async function follow(client: KubeClient, path: string, opened: () => void): Promise<void> {
  const list = await client.json<{ metadata: { resourceVersion: string } }>(path, {
    query: { limit: 1 },
  });
  let rv = list.metadata.resourceVersion;
  for (;;) {
    let res: Awaited<ReturnType<KubeClient["stream"]>>;
    try {
      res = await client.stream(path, {
        watch: "true",
        resourceVersion: rv,
        allowWatchBookmarks: "true",
        timeoutSeconds: 3600,
      });
    } catch (err) {
      // A server that just started answers 429 while its watch cache of the resource fills.
      if (!(err instanceof ApiError && err.status === 429)) throw err;
      await new Promise(r => setTimeout(r, err.retryAfterMs ?? 1000));
      continue;
    }
    opened();
    const splitter = new LineSplitter();
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      const at = Date.now();
      let out = "";
      for (const line of splitter.push(chunk)) {
        const ev = JSON.parse(line) as {
          type: string;
          object: { metadata?: { resourceVersion?: string } };
        };
        const r = ev.object.metadata?.resourceVersion;
        if (!r) continue;
        rv = r;
        if (ev.type !== "BOOKMARK") out += `${r} ${at}\n`;
      }
      if (out) process.stdout.write(out);
    }
  }
}

function once(f: () => void): () => void {
  let done = false;
  return () => {
    if (!done) f();
    done = true;
  };
}

async function main(): Promise<void> {
  const [kubeconfig, ...paths] = process.argv.slice(2);
  let waiting = paths.length;
  // "ready" once every watch has its answer: writes acknowledged from now on are all seen.
  const opened = () => {
    if (--waiting === 0) process.stdout.write("ready\n");
  };
  // A client (a connection) per collection: a stall of one stream cannot hold up the other's.
  await Promise.all(
    paths.map(async p =>
      follow(await KubeClient.create(loadKubeConfig({ kubeconfig })), p, once(opened)),
    ),
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
