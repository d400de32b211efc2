import { randomBytes, randomUUID } from 'node:crypto';
import {
  BOOTSTRAP_API_VERSION,
  CAPI_API_VERSION,
  CapiGroups,
  CapiLabels,
  CapiTypes,
  INFRA_API_VERSION,
  LABEL_MAGNUM_CLUSTER,
  type ApiObject,
  type NewObject,
} from '../../domain/index.ts';
import type { WriteOp } from '../../store/index.ts';
import type { KubeRoutesDeps } from './context.ts';
import type { KubeResource } from './resources.ts';
import { invalid } from './status.ts';

/**
 * `kubectl apply -f machine.yaml` for one more worker, the short way: a Machine whose
 * `bootstrap.configRef` names a KubeadmConfigTemplate and whose `infrastructureRef` names an
 * OpenStackMachineTemplate (e.g. those of a Magnum cluster's node group, `kubectl get
 * kubeadmconfigtemplates,openstackmachinetemplates`). Cluster API wants a Machine to point at
 * its own KubeadmConfig and OpenStackMachine; here they are made from the templates at create
 * time, named after the Machine and owned by it, as a MachineSet would make them, and the
 * Machine is stored pointing at them. All three are written in one commit.
 *
 * The copies do not carry the Magnum labels: such a Machine is the user's, not part of a node
 * group (it is not counted in node_count); it is deleted with its cluster.
 */

type Stored = ApiObject<unknown, unknown>;

interface Ref {
  apiGroup?: string;
  kind?: string;
  name?: string;
}

interface MachineSpecRefs {
  clusterName?: string;
  bootstrap?: { configRef?: Ref; dataSecretName?: string };
  infrastructureRef?: Ref;
}

const BOOTSTRAP_TEMPLATE = 'KubeadmConfigTemplate';
const INFRA_TEMPLATE = 'OpenStackMachineTemplate';
/** Upstream's annotations on objects cloned from a template. */
const CLONED_FROM_NAME = 'cluster.x-k8s.io/cloned-from-name';
const CLONED_FROM_KIND = 'cluster.x-k8s.io/cloned-from-groupkind';

/** True when a Machine body names templates instead of its own bootstrap/infrastructure objects. */
export function namesTemplates(r: KubeResource, spec: unknown): boolean {
  if (r.type !== CapiTypes.Machine || typeof spec !== 'object' || spec === null) return false;
  const s = spec as MachineSpecRefs;
  return s.bootstrap?.configRef?.kind === BOOTSTRAP_TEMPLATE || s.infrastructureRef?.kind === INFRA_TEMPLATE;
}

function suffix(): string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  return [...randomBytes(5)].map((b) => alphabet[b % alphabet.length]).join('');
}

function withoutMagnumLabels(labels: Record<string, string>): Record<string, string> {
  const out = { ...labels };
  delete out[LABEL_MAGNUM_CLUSTER];
  delete out[CapiLabels.nodeGroup];
  delete out[CapiLabels.deploymentName];
  delete out[CapiLabels.setName];
  delete out[CapiLabels.templateHash];
  return out;
}

/**
 * The writes that create `machine` with objects made from the templates it names (422 when a
 * template does not exist). The Machine keeps every other field of the request.
 */
export async function expandMachine(
  deps: KubeRoutesDeps,
  r: KubeResource,
  machine: NewObject<unknown, unknown>,
): Promise<{ ops: WriteOp[]; name: string }> {
  const ns = machine.metadata.namespace;
  const name = machine.metadata.name ?? `${machine.metadata.generateName ?? 'machine-'}${suffix()}`;
  const spec = structuredClone(machine.spec) as MachineSpecRefs & Record<string, unknown>;
  const labels = withoutMagnumLabels(machine.metadata.labels ?? {});
  if (spec.clusterName) labels[CapiLabels.clusterName] = spec.clusterName;
  const uid = randomUUID();
  const owner = {
    apiVersion: CAPI_API_VERSION,
    kind: 'Machine',
    name,
    uid,
    controller: true,
    blockOwnerDeletion: true,
  };
  const ops: WriteOp[] = [];
  const problems: string[] = [];

  const bootRef = spec.bootstrap?.configRef;
  if (bootRef?.kind === BOOTSTRAP_TEMPLATE) {
    const t = await deps.store.get<Stored>(CapiTypes.KubeadmConfigTemplate, ns, bootRef.name ?? '');
    if (!t)
      problems.push(
        `spec.bootstrap.configRef.name: "${bootRef.name ?? ''}": no KubeadmConfigTemplate of that name in namespace ${ns}`,
      );
    else {
      const cfgSpec = (t.spec as { template?: { spec?: unknown } }).template?.spec ?? {};
      ops.push({
        op: 'create',
        object: {
          apiVersion: BOOTSTRAP_API_VERSION,
          kind: 'KubeadmConfig',
          metadata: {
            name,
            namespace: ns,
            labels,
            annotations: {
              [CLONED_FROM_NAME]: t.metadata.name,
              [CLONED_FROM_KIND]: `${BOOTSTRAP_TEMPLATE}.${CapiGroups.bootstrap}`,
            },
            ownerReferences: [owner],
          },
          spec: structuredClone(cfgSpec),
        },
      });
      spec.bootstrap = {
        ...spec.bootstrap,
        configRef: { apiGroup: CapiGroups.bootstrap, kind: 'KubeadmConfig', name },
      };
    }
  }
  const infraRef = spec.infrastructureRef;
  if (infraRef?.kind === INFRA_TEMPLATE) {
    const t = await deps.store.get<Stored>(CapiTypes.OpenStackMachineTemplate, ns, infraRef.name ?? '');
    if (!t)
      problems.push(
        `spec.infrastructureRef.name: "${infraRef.name ?? ''}": no OpenStackMachineTemplate of that name in namespace ${ns}`,
      );
    else {
      const osmSpec = structuredClone(
        (t.spec as { template?: { spec?: unknown } }).template?.spec ?? {},
      ) as Record<string, unknown>;
      delete osmSpec.providerID;
      ops.push({
        op: 'create',
        object: {
          apiVersion: INFRA_API_VERSION,
          kind: 'OpenStackMachine',
          metadata: {
            name,
            namespace: ns,
            labels,
            annotations: {
              [CLONED_FROM_NAME]: t.metadata.name,
              [CLONED_FROM_KIND]: `${INFRA_TEMPLATE}.${CapiGroups.infrastructure}`,
            },
            ownerReferences: [owner],
          },
          spec: osmSpec,
        },
      });
      spec.infrastructureRef = { apiGroup: CapiGroups.infrastructure, kind: 'OpenStackMachine', name };
    }
  }
  if (problems.length > 0) throw invalid(r, name, problems);
  ops.unshift({
    op: 'create',
    object: { ...machine, metadata: { ...machine.metadata, name, uid, labels }, spec },
  });
  return { ops, name };
}

/**
 * `kubectl apply` of the same manifest again sends the template references back: keep the
 * stored references when the objects they name were made from those templates (the Machine's
 * references do not change after create).
 */
export async function keepExpandedRefs(
  deps: KubeRoutesDeps,
  r: KubeResource,
  stored: Stored,
  nextSpec: unknown,
): Promise<unknown> {
  if (!namesTemplates(r, nextSpec)) return nextSpec;
  const ns = stored.metadata.namespace;
  const was = stored.spec as MachineSpecRefs;
  const spec = structuredClone(nextSpec) as MachineSpecRefs & Record<string, unknown>;
  const clonedFrom = async (type: string, name: string | undefined) =>
    name ? (await deps.store.get<Stored>(type, ns, name))?.metadata.annotations[CLONED_FROM_NAME] : undefined;
  const boot = spec.bootstrap?.configRef;
  if (boot?.kind === BOOTSTRAP_TEMPLATE && was.bootstrap?.configRef?.kind === 'KubeadmConfig') {
    if ((await clonedFrom(CapiTypes.KubeadmConfig, was.bootstrap.configRef.name)) === boot.name)
      spec.bootstrap = { ...spec.bootstrap, configRef: was.bootstrap.configRef };
  }
  const infra = spec.infrastructureRef;
  if (infra?.kind === INFRA_TEMPLATE && was.infrastructureRef?.kind === 'OpenStackMachine') {
    if ((await clonedFrom(CapiTypes.OpenStackMachine, was.infrastructureRef.name)) === infra.name)
      spec.infrastructureRef = was.infrastructureRef;
  }
  if (namesTemplates(r, spec))
    throw invalid(r, stored.metadata.name, [
      'spec: a Machine names its own KubeadmConfig and OpenStackMachine; templates are accepted only when it is created',
    ]);
  return spec;
}
