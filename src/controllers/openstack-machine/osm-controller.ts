import { isNotFound } from '../../cloud/index.ts';
import {
  CapiConditions,
  CapiFinalizers,
  CapiLabels,
  CapiReasons,
  CapiTypes,
  openstackProviderId,
  refTypeKey,
  secretValue,
  type ApiObject,
  type CapiClusterObject,
  type MachineObject,
  type OpenStackClusterObject,
  type OpenStackMachineObject,
  type OpenStackMachineStatus,
  type SecretObject,
} from '../../domain/index.ts';
import { cloudErrorMessage, isTerminalCloudError } from '../common/cloud-errors.ts';
import {
  buildConditions,
  falseCondition,
  trueCondition,
  unknownCondition,
  type ConditionInput,
} from '../common/conditions.ts';
import { createdSinceStart, isPaused, pollDelay, type Env } from '../common/env.ts';
import {
  TerminalError,
  type ObjectRef,
  type ReconcileContext,
  type ReconcileResult,
  type Reconciler,
} from '../common/runtime-types.ts';
import { controllerOf, iso, writeObjectAndStatus } from '../common/writes.ts';
import { oscNames } from '../openstack-cluster/osc-network.ts';
import { reconcileOsmDelete } from './osm-delete.ts';
import { ensureMember, recordedMember } from './osm-member.ts';
import { ensurePort, ensureRootVolume, portAddress, resolve, type RecordMachine } from './osm-resources.ts';
import { oscForMachines, specViewExcept } from '../common/views.ts';

/**
 * The OpenStackMachine controller (the OpenStack provider's machine half): resolve image,
 * flavor and network, create the port, an optional boot volume and the server in the machine's
 * availability zone with flavor, image, keypair, user data (the bootstrap cloud-init) and tags,
 * wait for ACTIVE, report provider ID and addresses, and add control-plane machines to the API
 * load balancer. A server in ERROR is reported with Nova's fault message (a health check
 * replaces it); quota and invalid-request refusals stop with the cloud's message.
 */
export function openStackMachineReconciler(env: Env): Reconciler {
  return {
    name: 'openstackmachine',
    // its own status is derived from other objects each time, and the provider ID it writes into
    // its spec is written by the pass that finishes: neither needs a second pass
    view: specViewExcept('providerID'),
    type: CapiTypes.OpenStackMachine,
    watches: [
      {
        type: CapiTypes.Machine,
        // the Machine's copy of the provider ID comes from here
        view: specViewExcept('providerID'),
        map: (obj: ApiObject) => {
          const ref = (obj as MachineObject).spec.infrastructureRef;
          return ref?.kind === 'OpenStackMachine'
            ? [{ namespace: obj.metadata.namespace, name: ref.name }]
            : [];
        },
      },
      {
        type: CapiTypes.OpenStackCluster,
        view: oscForMachines,
        map: async (obj: ApiObject) => {
          const cluster = obj.metadata.labels[CapiLabels.clusterName];
          if (!cluster) return [];
          return (
            await env.cache.listByCluster<OpenStackMachineObject>(
              CapiTypes.OpenStackMachine,
              obj.metadata.namespace,
              cluster,
            )
          )
            .filter((o) => !o.status.initialization?.provisioned || o.metadata.deletionTimestamp)
            .map((o) => ({ namespace: o.metadata.namespace, name: o.metadata.name }));
        },
      },
    ],
    reconcile: (ctx, ref) => reconcileOsm(env, ctx, ref),
  };
}

const TERMINAL = new Set<string>([CapiReasons.Failed, CapiReasons.InvalidMachineSpec]);

/** Whether the last pass left the machine with its server ready, waiting only for its pool member. */
function waitsForMember(osm: OpenStackMachineObject): boolean {
  const cond = (type: string) => osm.status.conditions?.find((c) => c.type === type);
  return (
    cond(CapiConditions.InstanceReady)?.status === 'True' &&
    cond(CapiConditions.APIServerIngressReady)?.status === 'False' &&
    cond(CapiConditions.Ready)?.reason === CapiReasons.WaitingForLoadBalancer
  );
}

async function reconcileOsm(
  env: Env,
  ctx: ReconcileContext,
  ref: ObjectRef,
): Promise<ReconcileResult | void> {
  const { store } = ctx;
  let osm = await store.get<OpenStackMachineObject>(CapiTypes.OpenStackMachine, ref.namespace, ref.name);
  if (!osm) return;
  const ns = osm.metadata.namespace;
  const owner = controllerOf(osm, 'Machine');
  const machine = owner ? await store.get<MachineObject>(CapiTypes.Machine, ns, owner.name) : undefined;
  const cluster = machine
    ? await store.get<CapiClusterObject>(CapiTypes.Cluster, ns, machine.spec.clusterName)
    : undefined;
  const oscRef = cluster?.spec.infrastructureRef;
  const osc = oscRef
    ? await store.get<OpenStackClusterObject>(refTypeKey(oscRef), ns, oscRef.name)
    : undefined;
  if (osm.metadata.deletionTimestamp) return reconcileOsmDelete(env, ctx, osm, machine, cluster, osc);
  if (!machine || machine.metadata.uid !== owner?.uid || !cluster || isPaused(cluster, osm)) return;
  // The cluster is going: nothing is built or checked any more, its deletion comes to each machine.
  if (cluster.metadata.deletionTimestamp) return;
  const now = env.deps.clock.now();
  // The provider ID, once the server is up: written with the next status, whichever it is.
  let providerID: string | undefined;
  // The finalizer goes with the pass's first write, and at the latest before its first cloud
  // call: a new machine's first pass (it waits for the cluster's network) is one write, not two.
  let finalizerDue = !osm.metadata.finalizers.includes(CapiFinalizers.openStackMachine);
  const record: RecordMachine = async (patch) => {
    const before = osm!;
    const spec = providerID ? { ...before.spec, providerID } : before.spec;
    const metadata = finalizerDue
      ? { ...before.metadata, finalizers: [...before.metadata.finalizers, CapiFinalizers.openStackMachine] }
      : before.metadata;
    osm = await writeObjectAndStatus(store, before, { ...before, metadata, spec }, (generation) => ({
      ...before.status,
      ...patch,
      // a generation observed is the one this write leaves
      ...(patch.observedGeneration !== undefined ? { observedGeneration: generation } : {}),
    }));
    finalizerDue = false;
  };
  const ready = osm.status.conditions?.find((c) => c.type === CapiConditions.Ready);
  if (
    ready?.status === 'False' &&
    ready.reason &&
    TERMINAL.has(ready.reason) &&
    (osm.status.observedGeneration ?? 0) >= osm.metadata.generation
  ) {
    if (finalizerDue) await record({});
    return;
  }
  const setConditions = async (list: ConditionInput[], extra: Partial<OpenStackMachineStatus> = {}) => {
    await record({ ...extra, conditions: buildConditions(osm!.status.conditions, list, iso(now)) });
  };
  const waiting = async (reason: string, message: string) => {
    await setConditions([
      unknownCondition(CapiConditions.InstanceReady, reason, message),
      falseCondition(CapiConditions.Ready, reason, message),
    ]);
  };

  if (!osc || !(osc.status.initialization?.provisioned || osc.status.ready)) {
    await waiting(CapiReasons.WaitingForInfrastructure, 'waiting for the cluster network and load balancer');
    return;
  }
  const dataSecret = machine.spec.bootstrap.dataSecretName;
  if (!dataSecret) {
    await waiting(CapiReasons.WaitingForBootstrapData, 'waiting for bootstrap data');
    return;
  }
  const controlPlane = CapiLabels.controlPlane in machine.metadata.labels;
  if (finalizerDue) await record({});
  try {
    const cloud = await env.deps.cloud(ns);
    const { resolved, fresh } = await resolve(
      cloud,
      env.lookups,
      osm,
      machine,
      osc,
      record,
      createdSinceStart(env, osm),
    );
    const tags = [...new Set([...(osm.spec.tags ?? []), oscNames(osc).tag])];
    // Once the server is recorded, its port and boot volume are attached to it: they are not
    // looked up again on every pass, and the address comes from the server.
    const attachedPort = osm.status.instanceID ? osm.status.resources?.ports?.[0]?.id : undefined;
    const port: { id: string; ip?: string } = attachedPort
      ? { id: attachedPort }
      : await ensurePort(cloud, osm, resolved, tags, record, fresh);
    const volume = osm.status.instanceID
      ? undefined
      : await ensureRootVolume(cloud, osm, machine, resolved.imageID, record, fresh);
    if (volume && !volume.ready) {
      await waiting(CapiReasons.Provisioning, `waiting for boot volume (${volume.status})`);
      return { requeueAfterMs: env.settings.cloudPollMs };
    }

    // While a master waits only for Octavia to apply its member, a poll reads the member alone;
    // the pass that finds it applied goes on, and reads the server as every pass does.
    const memberWait = async (waiting: string, extra: Partial<OpenStackMachineStatus>) => {
      // polled soon after it is asked for (Octavia applies a member in moments), less often later
      const since = osm!.status.conditions?.find(
        (c) => c.type === CapiConditions.APIServerIngressReady && c.status === 'False',
      )?.lastTransitionTime;
      await setConditions(
        [
          trueCondition(CapiConditions.InstanceReady),
          falseCondition(CapiConditions.APIServerIngressReady, CapiReasons.WaitingForLoadBalancer, waiting),
          falseCondition(CapiConditions.Ready, CapiReasons.WaitingForLoadBalancer, waiting),
        ],
        extra,
      );
      return {
        requeueAfterMs: pollDelay(
          since ? Date.parse(since) : now,
          env.deps.clock.now(),
          env.settings.cloudPollMs,
        ),
      };
    };
    let memberApplied = false;
    if (controlPlane && osm.status.instanceID && waitsForMember(osm)) {
      const known = await recordedMember(cloud, osm, osc);
      if (known && !known.done) return memberWait(known.waiting, {});
      memberApplied = known?.done === true;
    }

    let server;
    if (osm.status.instanceID) {
      try {
        server = await cloud.compute.getServer(osm.status.instanceID);
      } catch (err) {
        if (!isNotFound(err)) throw err;
        const message = `server ${osm.metadata.name} (${osm.status.instanceID}) was deleted outside Magnetar`;
        await setConditions(
          [
            falseCondition(CapiConditions.InstanceReady, CapiReasons.InstanceStateError, message),
            falseCondition(CapiConditions.Ready, CapiReasons.InstanceStateError, message),
          ],
          { instanceState: 'DELETED' },
        );
        return;
      }
    } else {
      // a machine resolved in this pass has no server to find (see `resolve`)
      server = fresh ? undefined : (await cloud.compute.listServers({ name: osm.metadata.name }))[0];
      if (!server) {
        const secret = await store.get<SecretObject>(CapiTypes.Secret, ns, dataSecret);
        const userData = secretValue(secret);
        if (userData === undefined) {
          await waiting(CapiReasons.WaitingForBootstrapData, `bootstrap data secret ${dataSecret} not found`);
          return;
        }
        const created = await cloud.compute.createServer({
          name: osm.metadata.name,
          flavorId: resolved.flavorID,
          ...(volume ? {} : { imageId: resolved.imageID }),
          ...(machine.spec.failureDomain ? { availabilityZone: machine.spec.failureDomain } : {}),
          networks: [{ portId: port.id }],
          userData,
          metadata: Object.fromEntries((osm.spec.serverMetadata ?? []).map((m) => [m.key, m.value])),
          tags,
          ...(osm.spec.sshKeyName ? { keyName: osm.spec.sshKeyName } : {}),
          ...(volume
            ? {
                blockDevices: [
                  {
                    sourceType: 'volume',
                    destinationType: 'volume',
                    uuid: volume.id,
                    bootIndex: 0,
                    deleteOnTermination: true,
                  },
                ],
              }
            : {}),
          ...(osm.spec.configDrive ? { configDrive: true } : {}),
        });
        // A server Nova has just accepted is building: its ID and that state are recorded at
        // once, and it is looked at again after the first poll delay, not at once.
        const message = `server ${osm.metadata.name} is BUILD`;
        await setConditions(
          [
            falseCondition(CapiConditions.InstanceReady, CapiReasons.Provisioning, message),
            falseCondition(CapiConditions.Ready, CapiReasons.Provisioning, message),
          ],
          { instanceID: created.id, instanceState: 'BUILD' },
        );
        return { requeueAfterMs: pollDelay(now, env.deps.clock.now(), env.settings.cloudPollMs) };
      } else {
        await record({ instanceID: server.id });
      }
    }

    // The server's state goes with the next status written, whichever it is.
    const instanceState = server.status;
    if (server.status === 'ERROR') {
      const fault = server.fault?.message ?? 'unknown error';
      const message = `server ${server.name} is ERROR: ${fault}`;
      await setConditions(
        [
          falseCondition(CapiConditions.InstanceReady, CapiReasons.InstanceStateError, message),
          falseCondition(CapiConditions.Ready, CapiReasons.InstanceStateError, message),
        ],
        { instanceState },
      );
      return { requeueAfterMs: 60_000 };
    }
    if (server.status !== 'ACTIVE') {
      const reason = server.status === 'BUILD' ? CapiReasons.Provisioning : 'InstanceNotActive';
      const message = `server ${server.name} is ${server.status}`;
      await setConditions(
        [
          falseCondition(CapiConditions.InstanceReady, reason, message),
          falseCondition(CapiConditions.Ready, reason, message),
        ],
        { instanceState },
      );
      return {
        requeueAfterMs: pollDelay(
          server.created ? Date.parse(server.created) : undefined,
          env.deps.clock.now(),
          env.settings.cloudPollMs,
        ),
      };
    }

    // written with the ready status below, or with the load balancer's wait for a master
    providerID = openstackProviderId(env.deps.region, server.id);
    const ip =
      server.addresses.find((a) => a.version === 4 && a.type !== 'floating')?.addr ??
      port.ip ??
      (await portAddress(cloud, port.id));
    const conds: ConditionInput[] = [trueCondition(CapiConditions.InstanceReady)];
    if (controlPlane) {
      const member = memberApplied
        ? ({ done: true } as const)
        : await ensureMember(cloud, osm, osc, ip, record);
      if (!member.done) return memberWait(member.waiting, { instanceState });
      conds.push(trueCondition(CapiConditions.APIServerIngressReady));
    }
    const before = osm;
    await writeObjectAndStatus(
      store,
      before,
      { ...before, spec: { ...before.spec, providerID } },
      (generation) => ({
        ...before.status,
        ready: true,
        initialization: { provisioned: true },
        instanceID: server.id,
        instanceState: server.status,
        addresses: [
          ...(ip ? [{ type: 'InternalIP' as const, address: ip }] : []),
          { type: 'InternalDNS' as const, address: server.name },
          { type: 'Hostname' as const, address: server.name },
        ],
        ...(server.availabilityZone ? { failureDomain: server.availabilityZone } : {}),
        conditions: buildConditions(
          before.status.conditions,
          [...conds, trueCondition(CapiConditions.Ready)],
          iso(now),
        ),
        observedGeneration: generation,
      }),
    );
  } catch (err) {
    const terminal = err instanceof TerminalError || isTerminalCloudError(err);
    const message = err instanceof TerminalError ? err.message : cloudErrorMessage(err);
    const reason =
      err instanceof TerminalError && err.reason === 'InvalidMachineSpec'
        ? CapiReasons.InvalidMachineSpec
        : terminal
          ? CapiReasons.Failed
          : CapiReasons.OpenStackError;
    await setConditions(
      [
        falseCondition(CapiConditions.InstanceReady, reason, message),
        falseCondition(CapiConditions.Ready, reason, message),
      ],
      terminal ? { observedGeneration: osm.metadata.generation } : {},
    );
    if (terminal)
      throw err instanceof TerminalError ? err : new TerminalError(message, reason, { cause: err });
    throw err;
  }
}
