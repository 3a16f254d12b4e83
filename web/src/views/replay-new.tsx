// Building a replay plan: namespaces at a time (or a snapshot), a namespace map and the policy flags.
// Planning only reads the journal and records the plan; nothing is written to workloads.
import { useState } from "preact/hooks";
import { ApiFailure, parsePlain } from "../api-client";
import { listOf, parseNamespaceMap } from "../replay-model";
import { hrefOf } from "../route-state";
import { asFailure, useShared } from "../ui/context";
import { formValues, go } from "../ui/nav";
import { ErrorBox } from "../ui/states";

export function NewPlan() {
  const { api } = useShared();
  const [error, setError] = useState<ApiFailure | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (form: HTMLFormElement) => {
    const v = formValues(form);
    const flag = (name: string) => (form.elements.namedItem(name) as HTMLInputElement).checked;
    setError(null);
    let namespaceMap: Record<string, string>;
    try {
      namespaceMap = parseNamespaceMap(v.map ?? "");
    } catch (err) {
      setError(
        new ApiFailure(0, "invalid_input", (err as Error).message, [
          { path: "Namespace map", message: (err as Error).message },
        ]),
      );
      return;
    }
    const body = {
      ...(v.cluster ? { cluster: v.cluster } : {}),
      ...(v.at ? { at: v.at } : {}),
      ...(v.snapshot ? { snapshot: v.snapshot } : {}),
      namespaces: listOf(v.namespaces ?? ""),
      ...(Object.keys(namespaceMap).length > 0 ? { namespaceMap } : {}),
      allowGaps: flag("allowGaps"),
      allowFinalizers: flag("allowFinalizers"),
      allowOwnerRefs: flag("allowOwnerRefs"),
      intoSourceCluster: flag("intoSourceCluster"),
    };
    setBusy(true);
    try {
      const made = parsePlain<{ id: string }>(await api.post("/v1/replay-plans", body));
      go(hrefOf("replay", { plan: made.data.id }));
    } catch (err) {
      setError(asFailure(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="new-plan-title" data-testid="new-plan">
      <h2 id="new-plan-title">Build a plan</h2>
      <form
        class="filters"
        aria-label="Build a replay plan"
        onSubmit={e => {
          e.preventDefault();
          void submit(e.currentTarget);
        }}
      >
        <label>
          At (ISO time) <input name="at" placeholder="2026-01-01T12:00:00Z" />
        </label>
        <label>
          Snapshot id <input name="snapshot" placeholder="or a stored snapshot" />
        </label>
        <label>
          Source namespaces <input name="namespaces" required placeholder="shop, web" />
        </label>
        <label>
          Namespace map <input name="map" placeholder="shop=shop-restore" />
        </label>
        <label>
          Cluster <input name="cluster" placeholder="only one" />
        </label>
        <label class="inline">
          <input type="checkbox" name="allowGaps" /> Allow gaps
        </label>
        <label class="inline">
          <input type="checkbox" name="allowFinalizers" /> Allow finalizers
        </label>
        <label class="inline">
          <input type="checkbox" name="allowOwnerRefs" /> Allow owner references
        </label>
        <label class="inline">
          <input type="checkbox" name="intoSourceCluster" /> Replay into the source cluster itself
        </label>
        <button type="submit" disabled={busy}>
          {busy ? "Planning…" : "Build plan"}
        </button>
      </form>
      <p class="muted">
        Give a time or a snapshot. A plan from history with gaps is refused unless “Allow gaps” is
        set, and then it says so in its warnings.
      </p>
      {error && <ErrorBox error={error} what="a plan" />}
    </section>
  );
}
