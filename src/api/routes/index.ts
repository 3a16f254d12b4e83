// Every route group of the sidecar. To add routes: write routes/<group>.ts exporting an array of
// route({...}) (see ../route.ts), and add it here. Its schemas feed validation and /openapi.json.
import type { Route } from "../route";
import { analysisRoutes } from "./analysis";
import { auditRoutes } from "./audit";
import { eventRoutes } from "./events";
import { journalRoutes } from "./journal";
import { objectRoutes } from "./objects";
import { replayRoutes } from "./replay";
import { snapshotRoutes } from "./snapshots";
import { systemRoutes } from "./system";

export const ROUTES: readonly Route[] = [
  ...systemRoutes,
  ...journalRoutes,
  ...eventRoutes,
  ...objectRoutes,
  ...analysisRoutes,
  ...snapshotRoutes,
  ...auditRoutes,
  ...replayRoutes(),
];
