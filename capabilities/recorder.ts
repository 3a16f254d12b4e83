import { Capability, a } from "pepr";
import { processRuntime } from "../src/runtime";

export const RecorderCapability = new Capability({
  name: "recorder",
  description:
    "Records every change of the selected resources into the krply journal with its own list/watch engine; " +
    "Reconcile on CustomResourceDefinitions starts and stops streams.",
});

const { When, Store } = RecorderCapability;

// The runtime records only in the watcher controller; elsewhere these handlers do nothing.
Store.onReady(() => {
  processRuntime().storeReady(
    value => Store.setItem("checkpoints", value),
    () => Store.getItem("checkpoints"),
  );
});

When(a.CustomResourceDefinition)
  .IsCreatedOrUpdated()
  .Reconcile((crd, phase) => processRuntime().onCrd(crd, phase));

When(a.CustomResourceDefinition)
  .IsDeleted()
  .Reconcile(crd => processRuntime().onCrd(crd, "DELETED"));
