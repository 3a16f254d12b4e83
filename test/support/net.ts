// Loopback ports for the processes tests and the demo start.
import { get } from "node:http";
import { createServer } from "node:net";

/** A free port on 127.0.0.1 (asked of the kernel, then released for a child to take). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/**
 * One GET on a connection of its own, closed after the answer, as the kubelet sends its probes.
 * A poll that reuses a kept-alive connection to a server in the same process can meet the server's
 * idle timeout closing it just as the next request goes out (ECONNRESET after a long event-loop
 * block); a probe never reuses one.
 */
export function getOnce(url: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = get(url, { agent: false }, res => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }),
      );
      res.on("error", reject);
    });
    req.on("error", err => reject(new Error(`GET ${url}: ${err.message}`, { cause: err })));
  });
}
