import { z } from "zod";
import type { KubeClient } from "../kube/client";

/**
 * Who a journal's resourceVersions belong to. RVs are only meaningful inside one etcd history, so the
 * recorder must never resume a checkpoint against a different cluster.
 * - The kube-system namespace UID is created once per etcd data set and survives API-server restarts,
 *   upgrades, certificate rotation and new load balancers.
 * - The server URL is kept too: two clusters restored from the same etcd backup share the UID but have
 *   diverging RV histories, and they are told apart by where they are reached.
 */
export interface ClusterIdentity {
  server: string;
  kubeSystemUid: string;
  /** The stable id used in stream keys: "<host[:port]>~<uid>". */
  clusterId: string;
}

const NamespaceSchema = z.looseObject({
  metadata: z.looseObject({ uid: z.string().min(1) }),
});

/** Builds the cluster id from the server URL and the kube-system UID. */
export function clusterIdOf(server: string, kubeSystemUid: string): string {
  let host: string;
  try {
    host = new URL(server).host;
  } catch (err) {
    throw new Error(`server URL "${server}" is not a URL`, { cause: err });
  }
  return `${host}~${kubeSystemUid}`;
}

/** Reads the kube-system namespace and returns the cluster identity. */
export async function clusterIdentity(client: KubeClient): Promise<ClusterIdentity> {
  let raw: unknown;
  try {
    raw = await client.json("/api/v1/namespaces/kube-system");
  } catch (err) {
    throw new Error("cannot read namespace kube-system to identify the cluster", { cause: err });
  }
  const ns = NamespaceSchema.parse(raw);
  return {
    server: client.server,
    kubeSystemUid: ns.metadata.uid,
    clusterId: clusterIdOf(client.server, ns.metadata.uid),
  };
}
