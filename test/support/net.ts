// Loopback ports for the processes tests and the demo start.
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
