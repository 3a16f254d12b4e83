// The form that names one object (kind, namespace, name, cluster), shared by Timeline and Diff.
import { refOf, type Params } from "../route-state";
import { formValues } from "./nav";

export function ObjectForm({
  params,
  label,
  onPick,
}: {
  params: Params;
  label: string;
  onPick: (v: Record<string, string>) => void;
}) {
  const r = refOf(params);
  return (
    <form
      class="filters"
      aria-label={label}
      onSubmit={e => {
        e.preventDefault();
        onPick(formValues(e.currentTarget));
      }}
    >
      <label>
        Kind{" "}
        <input
          name="kind"
          required
          defaultValue={r?.kind ?? params.kind ?? ""}
          placeholder="deploy"
        />
      </label>
      <label>
        Namespace{" "}
        <input name="ns" defaultValue={params.ns ?? ""} placeholder="none (cluster-scoped)" />
      </label>
      <label>
        Name <input name="name" required defaultValue={params.name ?? ""} />
      </label>
      <label>
        Cluster <input name="cluster" defaultValue={params.cluster ?? ""} placeholder="only one" />
      </label>
      <button type="submit">Show</button>
    </form>
  );
}
