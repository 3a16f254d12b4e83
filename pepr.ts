import { PeprModule } from "pepr";
import cfg from "./package.json";
import { RecorderCapability } from "./capabilities/recorder";
import { ReplayApproval } from "./capabilities/replay-approval";
import { ReplayGate } from "./capabilities/replay-gate";
import { Snapshots } from "./capabilities/snapshots";

/** The krply module: each later capability is registered here with its own registration test. */
export const capabilities = [RecorderCapability, ReplayGate, ReplayApproval, Snapshots];

new PeprModule(cfg, capabilities);
