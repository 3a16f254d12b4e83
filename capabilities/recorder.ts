import { Capability, a, Log } from "pepr";
import { Recorder, recorderConfigFromEnv } from "../src/watch/recorder";

export const RecorderCapability = new Capability({
  name: "recorder",
  description:
    "Records every change of the selected resources into the krply journal with its own list/watch engine; " +
    "Reconcile on CustomResourceDefinitions starts and stops streams.",
});

const { When, Store } = RecorderCapability;

// Only the watcher controller records (PEPR_WATCH_MODE=true, or `pepr dev`); admission pods and builds must not.
const recording = process.env.PEPR_WATCH_MODE === "true" || process.env.PEPR_MODE === "dev";

let storeReady = false;
Store.onReady(() => {
  storeReady = true;
});

/** The single recorder of this process; null outside watch mode. */
export const recorder: Recorder | null = recording
  ? new Recorder(recorderConfigFromEnv(process.env), {
      mirror: value => {
        if (storeReady) Store.setItem("checkpoints", value);
      },
    })
  : null;

if (recorder) {
  recorder.start().catch((err: unknown) => Log.error({ err }, "krply recorder failed to start"));
}

const onCrd = (phase: "ADDED" | "MODIFIED" | "DELETED") => async (crd: unknown) => {
  if (recorder) await recorder.onCrd(crd, phase);
};

When(a.CustomResourceDefinition)
  .IsCreatedOrUpdated()
  .Reconcile(async (crd, phase) => onCrd(phase === "ADDED" ? "ADDED" : "MODIFIED")(crd));

When(a.CustomResourceDefinition)
  .IsDeleted()
  .Reconcile(async crd => onCrd("DELETED")(crd));
