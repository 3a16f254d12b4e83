// Loading, empty and error states, the same in every view. An error names the server's code and
// message; it is never shown as an empty table.
import type { ComponentChildren } from "preact";
import type { ApiFailure } from "../api-client";
import type { Load } from "./context";

export function Loading({ what }: { what: string }) {
  return (
    <p class="state loading" role="status" data-testid="loading">
      Loading {what}…
    </p>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return (
    <p class="state empty" data-testid="empty">
      {children}
    </p>
  );
}

export function ErrorBox({ error, what }: { error: ApiFailure; what: string }) {
  return (
    <div class="state error" role="alert" data-testid="error">
      <p>
        <strong>Could not load {what}.</strong> {error.message}
      </p>
      <p class="muted">
        {error.status > 0 ? `HTTP ${error.status}, ` : ""}
        code <code>{error.code}</code>
      </p>
      {error.fields.length > 0 && (
        <ul>
          {error.fields.map(f => (
            <li key={f.path}>
              <code>{f.path || "(input)"}</code>: {f.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** Renders a load: loading, error, or the value through `ok`. */
export function Loaded<T>({
  load,
  what,
  children,
}: {
  load: Load<T> | null;
  what: string;
  children: (value: T) => ComponentChildren;
}) {
  if (!load) return null;
  if (load.status === "loading") return <Loading what={what} />;
  if (load.status === "error") return <ErrorBox error={load.error} what={what} />;
  return <>{children(load.value)}</>;
}
