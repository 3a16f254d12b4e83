// Types of the two undici modules src/kube/client.ts imports by path (undici types its index only).
declare module "undici/lib/dispatcher/agent.js" {
  import { Agent } from "undici";
  export = Agent;
}

declare module "undici/lib/api/api-request.js" {
  import type { Dispatcher } from "undici";
  /** Dispatcher.prototype.request before undici's index attaches it: call it with the dispatcher. */
  function request(
    this: Dispatcher,
    opts: Dispatcher.RequestOptions,
  ): Promise<Dispatcher.ResponseData>;
  export = request;
}
