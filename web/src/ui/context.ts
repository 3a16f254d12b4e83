// What every view shares: the API client, and a generation that bumps when a token is entered so
// views that failed with 401 load again.
import { createContext } from "preact";
import { useContext, useLayoutEffect, useState } from "preact/hooks";
import { ApiFailure, type ApiClient } from "../api-client";

export interface Shared {
  api: ApiClient;
  generation: number;
  /** Counts requests in flight (main[aria-busy]); called with +1 at a start and -1 once at its end. */
  busy: (delta: 1 | -1) => void;
}

export const SharedContext = createContext<Shared | null>(null);

export function useShared(): Shared {
  const s = useContext(SharedContext);
  if (!s) throw new Error("SharedContext is not provided");
  return s;
}

export type Load<T> =
  | { status: "loading" }
  | { status: "error"; error: ApiFailure }
  | { status: "ok"; value: T };

/** Loads when a key changes (and after a new token); a newer load aborts the one in flight. */
export function useLoad<T>(
  key: string | null,
  load: (api: ApiClient, signal: AbortSignal) => Promise<T>,
): Load<T> | null {
  const { api, generation, busy } = useShared();
  // The state remembers its key: after the key changes, the old value is never shown as the new one.
  const [held, setState] = useState<{ key: string; load: Load<T> } | null>(null);
  // A layout effect starts the load in the render that changed the key, so main[aria-busy] never
  // reads "false" between a new URL and its first request.
  useLayoutEffect(() => {
    if (key === null) {
      setState(null);
      return;
    }
    const mine = key;
    const ctl = new AbortController();
    let pending = true;
    // The busy count drops in the same task that sets the data, so one render shows both.
    const done = () => {
      if (pending) busy(-1);
      pending = false;
    };
    busy(1);
    setState({ key: mine, load: { status: "loading" } });
    load(api, ctl.signal).then(
      value => {
        if (ctl.signal.aborted) return;
        setState({ key: mine, load: { status: "ok", value } });
        done();
      },
      (err: unknown) => {
        if (ctl.signal.aborted) return;
        setState({ key: mine, load: { status: "error", error: asFailure(err) } });
        done();
      },
    );
    return () => {
      ctl.abort();
      done();
    };
    // The key names everything the load depends on.
  }, [key, generation]);
  if (key === null) return null;
  return held && held.key === key ? held.load : { status: "loading" };
}

export function asFailure(err: unknown): ApiFailure {
  if (err instanceof ApiFailure) return err;
  return new ApiFailure(0, "client_error", (err as Error)?.message ?? "unexpected failure");
}
