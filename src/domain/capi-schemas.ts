import { z } from 'zod';
import { CapiTypes } from './capi.ts';

/**
 * zod schemas of the Cluster API and OpenStack provider specs that arrive from users
 * (`kubectl apply` through the kube façade). They check what Magnetar relies on and keep the
 * fields Magnetar does not interpret (loose objects), so upstream manifests apply unchanged.
 * Admission rules that need more than shape (odd KCP replicas, one minor at a time) are in
 * {@link validateCapiSpec}.
 */

const name = z.string().min(1).max(253);
const ref = z.looseObject({ apiGroup: z.string(), kind: z.string().min(1), name });
const intOrPercent = z.union([
  z.number().int().min(0),
  z.string().regex(/^\d+%$/, 'expected an integer or a percentage like "25%"'),
]);
const selector = z.looseObject({
  matchLabels: z.record(z.string(), z.string()).optional(),
  matchExpressions: z
    .array(
      z.object({
        key: z.string(),
        operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist']),
        values: z.array(z.string()).optional(),
      }),
    )
    .optional(),
});
const metaTemplate = z
  .looseObject({
    labels: z.record(z.string(), z.string()).optional(),
    annotations: z.record(z.string(), z.string()).optional(),
  })
  .optional();
const deletion = z
  .looseObject({
    nodeDrainTimeoutSeconds: z.number().int().min(0).optional(),
    nodeVolumeDetachTimeoutSeconds: z.number().int().min(0).optional(),
    nodeDeletionTimeoutSeconds: z.number().int().min(0).optional(),
  })
  .optional();
const version = z.string().regex(/^v?\d+\.\d+\.\d+([-+].*)?$/, 'expected a Kubernetes version like v1.31.4');
const idOrFilter = z.looseObject({
  id: z.string().optional(),
  filter: z.looseObject({ name: z.string().optional(), tags: z.array(z.string()).optional() }).optional(),
});

const machineSpecShape = {
  clusterName: name,
  bootstrap: z.looseObject({ configRef: ref.optional(), dataSecretName: z.string().optional() }),
  infrastructureRef: ref,
  version: version.optional(),
  failureDomain: z.string().optional(),
  minReadySeconds: z.number().int().min(0).optional(),
  deletion,
};

export const MachineSpecSchema = z.looseObject({ ...machineSpecShape, providerID: z.string().optional() });
const machineTemplate = z.looseObject({ metadata: metaTemplate, spec: z.looseObject(machineSpecShape) });

export const CapiClusterSpecSchema = z.looseObject({
  clusterNetwork: z
    .looseObject({
      pods: z.looseObject({ cidrBlocks: z.array(z.string()) }).optional(),
      services: z.looseObject({ cidrBlocks: z.array(z.string()) }).optional(),
      serviceDomain: z.string().optional(),
      apiServerPort: z.number().int().min(1).max(65535).optional(),
    })
    .optional(),
  controlPlaneEndpoint: z
    .looseObject({ host: z.string(), port: z.number().int().min(0).max(65535) })
    .optional(),
  controlPlaneRef: ref.optional(),
  infrastructureRef: ref.optional(),
  paused: z.boolean().optional(),
});

export const MachineSetSpecSchema = z.looseObject({
  clusterName: name,
  replicas: z.number().int().min(0).optional(),
  selector,
  template: machineTemplate,
  deletion: z.looseObject({ order: z.enum(['Random', 'Newest', 'Oldest']).optional() }).optional(),
});

export const MachineDeploymentSpecSchema = z.looseObject({
  clusterName: name,
  replicas: z.number().int().min(0).optional(),
  selector,
  template: machineTemplate,
  rollout: z
    .looseObject({
      after: z.string().optional(),
      strategy: z
        .looseObject({
          type: z.enum(['RollingUpdate', 'OnDelete']).optional(),
          rollingUpdate: z
            .looseObject({ maxSurge: intOrPercent.optional(), maxUnavailable: intOrPercent.optional() })
            .optional(),
        })
        .optional(),
    })
    .optional(),
  deletion: z.looseObject({ order: z.enum(['Random', 'Newest', 'Oldest']).optional() }).optional(),
  paused: z.boolean().optional(),
});

const unhealthyCondition = z.looseObject({
  type: z.string().min(1),
  status: z.enum(['True', 'False', 'Unknown']),
  timeoutSeconds: z.number().int().min(0),
});

export const MachineHealthCheckSpecSchema = z.looseObject({
  clusterName: name,
  selector,
  checks: z
    .looseObject({
      nodeStartupTimeoutSeconds: z.number().int().min(0).optional(),
      unhealthyNodeConditions: z.array(unhealthyCondition).optional(),
      unhealthyMachineConditions: z.array(unhealthyCondition).optional(),
    })
    .optional(),
  remediation: z
    .looseObject({
      triggerIf: z
        .looseObject({
          unhealthyLessThanOrEqualTo: intOrPercent.optional(),
          unhealthyInRange: z
            .string()
            .regex(/^\[\d+-\d+\]$/, 'expected a range like "[1-3]"')
            .optional(),
        })
        .optional(),
    })
    .optional(),
});

const kubeadmFile = z.looseObject({
  path: z.string().min(1),
  content: z.string(),
  owner: z.string().optional(),
  permissions: z.string().optional(),
  encoding: z.enum(['base64', 'gzip', 'gzip+base64']).optional(),
});

export const KubeadmConfigSpecSchema = z.looseObject({
  clusterConfiguration: z.looseObject({}).optional(),
  initConfiguration: z.looseObject({}).optional(),
  joinConfiguration: z.looseObject({}).optional(),
  files: z.array(kubeadmFile).optional(),
  preKubeadmCommands: z.array(z.string()).optional(),
  postKubeadmCommands: z.array(z.string()).optional(),
  users: z.array(z.looseObject({ name: z.string().min(1) })).optional(),
  ntp: z.looseObject({}).optional(),
  format: z.enum(['cloud-config', 'ignition']).optional(),
});

export const KubeadmConfigTemplateSpecSchema = z.looseObject({
  template: z.looseObject({ spec: KubeadmConfigSpecSchema }),
});

export const KubeadmControlPlaneSpecSchema = z.looseObject({
  replicas: z.number().int().min(1).optional(),
  version,
  machineTemplate: z.looseObject({
    metadata: metaTemplate,
    spec: z.looseObject({ infrastructureRef: ref, deletion }),
  }),
  kubeadmConfigSpec: KubeadmConfigSpecSchema,
  rollout: z
    .looseObject({
      after: z.string().optional(),
      strategy: z
        .looseObject({
          type: z.literal('RollingUpdate').optional(),
          rollingUpdate: z
            .looseObject({ maxSurge: z.union([z.literal(0), z.literal(1)]).optional() })
            .optional(),
        })
        .optional(),
    })
    .optional(),
  remediation: z
    .looseObject({
      maxRetry: z.number().int().min(0).optional(),
      retryPeriodSeconds: z.number().int().min(0).optional(),
      minHealthyPeriodSeconds: z.number().int().min(0).optional(),
    })
    .optional(),
});

export const OpenStackClusterSpecSchema = z.looseObject({
  identityRef: z
    .looseObject({ name: z.string(), cloudName: z.string().optional(), region: z.string().optional() })
    .optional(),
  managedSubnets: z
    .array(z.looseObject({ cidr: z.string().min(1), dnsNameservers: z.array(z.string()).optional() }))
    .max(1, 'at most one managed subnet')
    .optional(),
  network: idOrFilter.optional(),
  subnets: z.array(idOrFilter).optional(),
  externalNetwork: idOrFilter.optional(),
  disableExternalNetwork: z.boolean().optional(),
  apiServerLoadBalancer: z.looseObject({ enabled: z.boolean().optional() }).optional(),
  disableAPIServerFloatingIP: z.boolean().optional(),
  apiServerFloatingIP: z.string().optional(),
  apiServerPort: z.number().int().min(1).max(65535).optional(),
  managedSecurityGroups: z.looseObject({ allowAllInClusterTraffic: z.boolean().optional() }).optional(),
  controlPlaneAvailabilityZones: z.array(z.string()).optional(),
  tags: z.array(z.string()).optional(),
  controlPlaneEndpoint: z.looseObject({ host: z.string(), port: z.number().int() }).optional(),
});

export const OpenStackMachineSpecSchema = z.looseObject({
  providerID: z.string().optional(),
  flavor: z.string().optional(),
  flavorID: z.string().optional(),
  image: idOrFilter,
  sshKeyName: z.string().optional(),
  ports: z
    .array(z.looseObject({ network: idOrFilter.optional(), nameSuffix: z.string().optional() }))
    .optional(),
  securityGroups: z.array(idOrFilter).optional(),
  tags: z.array(z.string()).optional(),
  serverMetadata: z.array(z.looseObject({ key: z.string(), value: z.string() })).optional(),
  configDrive: z.boolean().optional(),
  rootVolume: z
    .looseObject({
      sizeGiB: z.number().int().min(1),
      type: z.string().optional(),
      availabilityZone: z.string().optional(),
    })
    .optional(),
});

export const OpenStackMachineTemplateSpecSchema = z.looseObject({
  template: z.looseObject({ spec: OpenStackMachineSpecSchema }),
});

/** Spec schema per Cluster API store type key. */
export const CapiSpecSchemas: Record<string, z.ZodType> = {
  [CapiTypes.Cluster]: CapiClusterSpecSchema,
  [CapiTypes.Machine]: MachineSpecSchema,
  [CapiTypes.MachineSet]: MachineSetSpecSchema,
  [CapiTypes.MachineDeployment]: MachineDeploymentSpecSchema,
  [CapiTypes.MachineHealthCheck]: MachineHealthCheckSpecSchema,
  [CapiTypes.KubeadmControlPlane]: KubeadmControlPlaneSpecSchema,
  [CapiTypes.KubeadmConfig]: KubeadmConfigSpecSchema,
  [CapiTypes.KubeadmConfigTemplate]: KubeadmConfigTemplateSpecSchema,
  [CapiTypes.OpenStackCluster]: OpenStackClusterSpecSchema,
  [CapiTypes.OpenStackMachine]: OpenStackMachineSpecSchema,
  [CapiTypes.OpenStackMachineTemplate]: OpenStackMachineTemplateSpecSchema,
};

/**
 * Admission rules beyond shape, as Cluster API's webhooks enforce them. Returns the problems
 * (empty when the spec is acceptable); `previous` is the stored spec on update.
 */
export function validateCapiSpec(type: string, spec: unknown, previous?: unknown): string[] {
  const problems: string[] = [];
  const schema = CapiSpecSchemas[type];
  if (schema) {
    const r = schema.safeParse(spec);
    if (!r.success) for (const i of r.error.issues) problems.push(`spec.${i.path.join('.')}: ${i.message}`);
  }
  if (problems.length > 0) return problems;
  if (type === CapiTypes.KubeadmControlPlane) {
    const s = spec as { replicas?: number; version: string };
    if ((s.replicas ?? 1) % 2 === 0)
      problems.push('spec.replicas: cannot be an even number when etcd is stacked');
    const prev = previous as { version?: string } | undefined;
    const from = minorOf(prev?.version);
    const to = minorOf(s.version);
    if (from !== undefined && to !== undefined) {
      if (to < from) problems.push(`spec.version: cannot decrease from ${prev?.version} to ${s.version}`);
      else if (to > from + 1)
        problems.push(
          `spec.version: cannot skip Kubernetes minor versions (${prev?.version} → ${s.version}); upgrade one minor at a time`,
        );
    }
  }
  if (type === CapiTypes.MachineDeployment) {
    const ru = (
      spec as {
        rollout?: {
          strategy?: { rollingUpdate?: { maxSurge?: number | string; maxUnavailable?: number | string } };
        };
      }
    ).rollout?.strategy?.rollingUpdate;
    const zero = (v: number | string | undefined) => v === 0 || v === '0%';
    if (ru && zero(ru.maxSurge) && zero(ru.maxUnavailable)) {
      problems.push('spec.rollout.strategy.rollingUpdate: maxSurge and maxUnavailable cannot both be 0');
    }
  }
  return problems;
}

function minorOf(v: string | undefined): number | undefined {
  const m = /^v?(\d+)\.(\d+)/.exec(v ?? '');
  return m ? Number(m[1]) * 1000 + Number(m[2]) : undefined;
}
