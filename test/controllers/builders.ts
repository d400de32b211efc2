import type { Condition, MachineObject } from '../../src/domain/index.ts';

/** A Machine object for pure-function tests. */
export function machine(
  name: string,
  opts: {
    created?: string;
    fd?: string;
    version?: string;
    annotations?: Record<string, string>;
    labels?: Record<string, string>;
    conditions?: Partial<Condition>[];
    nodeRef?: string;
    deleting?: boolean;
    providerID?: string;
    ip?: string;
  } = {},
): MachineObject {
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'Machine',
    metadata: {
      name,
      namespace: 'p1',
      uid: `uid-${name}`,
      resourceVersion: '1',
      generation: 1,
      creationTimestamp: opts.created ?? '2026-01-01T00:00:00.000Z',
      ...(opts.deleting ? { deletionTimestamp: '2026-01-01T01:00:00.000Z' } : {}),
      labels: opts.labels ?? {},
      annotations: opts.annotations ?? {},
      ownerReferences: [],
      finalizers: [],
    },
    spec: {
      clusterName: 'c1',
      bootstrap: {},
      infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'OpenStackMachine', name },
      ...(opts.version ? { version: opts.version } : {}),
      ...(opts.fd ? { failureDomain: opts.fd } : {}),
      ...(opts.providerID ? { providerID: opts.providerID } : {}),
    },
    status: {
      ...(opts.nodeRef ? { nodeRef: { name: opts.nodeRef } } : {}),
      ...(opts.ip ? { addresses: [{ type: 'InternalIP', address: opts.ip }] } : {}),
      conditions: (opts.conditions ?? []).map((c) => ({
        type: c.type ?? 'Ready',
        status: c.status ?? 'True',
        lastTransitionTime: c.lastTransitionTime ?? '2026-01-01T00:00:00.000Z',
        ...(c.reason ? { reason: c.reason } : {}),
        ...(c.message ? { message: c.message } : {}),
      })),
    },
  };
}

/** Conditions of a machine whose node joined and is Ready. */
export const READY: Partial<Condition>[] = [
  { type: 'Ready', status: 'True' },
  { type: 'NodeReady', status: 'True' },
  { type: 'NodeHealthy', status: 'True' },
  { type: 'InfrastructureReady', status: 'True' },
];
