import { PeprModule } from "pepr";
import cfg from "./package.json";
import { RecorderCapability } from "./capabilities/recorder";
import { ReplayGate } from "./capabilities/replay-gate";
import { Snapshots } from "./capabilities/snapshots";

/** The krply module: each later capability is registered here with its own registration test. */
export const capabilities = [RecorderCapability, ReplayGate, Snapshots];

new PeprModule(cfg, capabilities);
