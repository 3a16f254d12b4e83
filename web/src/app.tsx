// The shell: banner, navigation, the current view (from the URL hash) and the token prompt.
import { Component, type ComponentChildren } from "preact";
import { useCallback, useEffect, useMemo, useRef, useState } from "preact/hooks";
import { apiClient, TOKEN_KEY, type ApiFailure, type TokenStore } from "./api-client";
import { hrefOf, parseHash, VIEW_TITLES, VIEWS, type RouteState } from "./route-state";
import { SharedContext } from "./ui/context";
import { TokenPrompt } from "./ui/token-prompt";
import { CoverageView } from "./views/coverage";
import { StreamsView } from "./views/streams";
import { SearchView } from "./views/search";
import { TimelineView } from "./views/timeline";
import { DiffView } from "./views/diff";
import { SnapshotsView } from "./views/snapshots";
import { ReplayView } from "./views/replay";

const sessionTokens: TokenStore = {
  get: () => sessionStorage.getItem(TOKEN_KEY),
  set: t => (t ? sessionStorage.setItem(TOKEN_KEY, t) : sessionStorage.removeItem(TOKEN_KEY)),
};

function useRoute(): RouteState {
  const [route, setRoute] = useState(() => parseHash(location.hash));
  useEffect(() => {
    const on = () => setRoute(parseHash(location.hash));
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return route;
}

export function App() {
  const route = useRoute();
  const [generation, setGeneration] = useState(0);
  const [denied, setDenied] = useState<ApiFailure | null>(null);
  const onUnauthorized = useCallback((f: ApiFailure) => setDenied(f), []);
  const api = useMemo(
    () => apiClient((u, i) => fetch(u, i), sessionTokens, onUnauthorized),
    [onUnauthorized],
  );
  const firstView = useRef(true);
  useEffect(() => {
    document.title = `${route.unknown ? "Not found" : VIEW_TITLES[route.view]} · krply`;
    // After a move to another view, focus goes to its content (as a page load would put a reader at
    // the top); on the first load it stays put, so the skip link remains the first Tab stop.
    if (firstView.current) firstView.current = false;
    else document.getElementById("main")?.focus({ preventScroll: true });
  }, [route.view, route.unknown]);
  const [pending, setPending] = useState(0);
  const busy = useCallback((d: 1 | -1) => setPending(n => n + d), []);
  const shared = useMemo(() => ({ api, generation, busy }), [api, generation, busy]);
  return (
    <SharedContext.Provider value={shared}>
      <a class="skip" href="#main" onClick={skipToMain}>
        Skip to content
      </a>
      <header class="top">
        <span class="brand">krply</span>
        <nav aria-label="Views">
          <ul>
            {VIEWS.map(v => (
              <li key={v}>
                <a
                  href={hrefOf(v)}
                  aria-current={route.view === v && !route.unknown ? "page" : undefined}
                >
                  {VIEW_TITLES[v]}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        {sessionTokens.get() && (
          <button
            type="button"
            class="secondary small"
            onClick={() => {
              sessionTokens.set(null);
              setGeneration(g => g + 1);
            }}
          >
            Forget token
          </button>
        )}
      </header>
      <main id="main" tabIndex={-1} aria-busy={pending > 0 ? "true" : "false"}>
        {route.unknown ? (
          <section data-testid="view-unknown">
            <h1>No such view</h1>
            <p>
              “{route.unknown}” is not a view. Go to <a href={hrefOf("coverage")}>Coverage</a>.
            </p>
          </section>
        ) : (
          <Guard key={route.view}>
            <View route={route} />
          </Guard>
        )}
      </main>
      {denied && (
        <TokenPrompt
          message={denied.message}
          onToken={t => {
            sessionTokens.set(t);
            setDenied(null);
            setGeneration(g => g + 1);
          }}
          onCancel={() => setDenied(null)}
        />
      )}
    </SharedContext.Provider>
  );
}

// The skip link must not change the hash: the hash is the app's state.
function skipToMain(e: Event) {
  e.preventDefault();
  document.getElementById("main")?.focus();
}

/** A view that throws shows an error state (its message, never a stack) instead of a blank page. */
class Guard extends Component<{ children: ComponentChildren }, { failed: string | null }> {
  override state = { failed: null as string | null };
  static override getDerivedStateFromError(err: unknown) {
    return { failed: (err as Error)?.message ?? "unexpected failure" };
  }
  override render() {
    if (this.state.failed === null) return this.props.children;
    return (
      <div class="state error" role="alert" data-testid="error">
        <p>
          <strong>This view failed.</strong> {this.state.failed}
        </p>
        <p>
          <a href={hrefOf("coverage")}>Go to Coverage</a>
        </p>
      </div>
    );
  }
}

function View({ route }: { route: RouteState }) {
  switch (route.view) {
    case "coverage":
      return <CoverageView route={route} />;
    case "streams":
      return <StreamsView route={route} />;
    case "timeline":
      return <TimelineView route={route} />;
    case "diff":
      return <DiffView route={route} />;
    case "snapshots":
      return <SnapshotsView route={route} />;
    case "search":
      return <SearchView route={route} />;
    case "replay":
      return <ReplayView route={route} />;
  }
}
