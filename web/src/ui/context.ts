// What every view shares: the API client, and a generation that bumps when a token is entered so
// views that failed with 401 load again.
import { createContext } from "preact";
import { useContext, useEffect, useState } from "preact/hooks";
import { ApiFailure, type ApiClient } from "../api-client";

export interface Shared {
  api: ApiClient;
  generation: number;
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
  const { api, generation } = useShared();
  const [state, setState] = useState<Load<T> | null>(null);
  useEffect(() => {
    if (key === null) {
      setState(null);
      return;
    }
    const ctl = new AbortController();
    setState({ status: "loading" });
    load(api, ctl.signal).then(
      value => {
        if (!ctl.signal.aborted) setState({ status: "ok", value });
      },
      (err: unknown) => {
        if (ctl.signal.aborted) return;
        setState({ status: "error", error: asFailure(err) });
      },
    );
    return () => ctl.abort();
    // The key names everything the load depends on.
  }, [key, generation]);
  return state;
}

export function asFailure(err: unknown): ApiFailure {
  if (err instanceof ApiFailure) return err;
  return new ApiFailure(0, "client_error", (err as Error)?.message ?? "unexpected failure");
}
