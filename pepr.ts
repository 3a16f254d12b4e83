import { PeprModule } from "pepr";
import cfg from "./package.json";
import { ReplayGate } from "./capabilities/replay-gate";

/** The krply module: each later capability is registered here with its own registration test. */
export const capabilities = [ReplayGate];

new PeprModule(cfg, capabilities);
