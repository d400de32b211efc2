import { isNotFound, type CloudClients } from '../../cloud/index.ts';
import {
  CapiLabels,
  type MachineObject,
  type OpenStackClusterObject,
  type OpenStackMachineObject,
  type OpenStackMachineStatus,
} from '../../domain/index.ts';
import { lookUpFlavor, lookUpImage, type Lookups } from '../common/lookups.ts';
import { TerminalError } from '../common/runtime-types.ts';

/**
 * The pieces of one machine's infrastructure — resolved references, its port, an optional boot
 * volume, the server, and (control plane) its load-balancer membership — each get-or-create by
 * deterministic name, with ids recorded as soon as they exist.
 */

/** Persist a status change at once. */
export type RecordMachine = (patch: Partial<OpenStackMachineStatus>) => Promise<void>;

/** Name of the n-th port of a machine. */
export function portName(osm: OpenStackMachineObject, index = 0): string {
  return `${osm.metadata.name}-${index}`;
}

/** Name of a machine's boot volume. */
export function rootVolumeName(osm: OpenStackMachineObject): string {
  return `${osm.metadata.name}-root`;
}

/**
 * Resolve image, flavor, network and security groups once, before creating anything. The image
 * and flavor lookups are shared by the project's machines for a minute ({@link Lookups}).
 *
 * The resolution is recorded before the first create of the machine's port, volume or server.
 * So a machine created since these controllers started that has none has asked the cloud for
 * nothing yet, and the pass that records it creates without looking up by name first
 * (`fresh`). Every later pass, and every machine older than the process (a restart, or a store
 * restored from a backup), looks up by name what it has not recorded.
 */
export async function resolve(
  cloud: CloudClients,
  lookups: Lookups,
  osm: OpenStackMachineObject,
  machine: MachineObject,
  osc: OpenStackClusterObject,
  record: RecordMachine,
  newSinceStart: boolean,
): Promise<{ resolved: Resolved; fresh: boolean }> {
  if (osm.status.resolved) return { resolved: osm.status.resolved, fresh: false };
  const project = osm.metadata.namespace;
  const image = osm.spec.image.id ?? osm.spec.image.filter?.name ?? '';
  const foundImage = await lookUpImage(lookups, cloud, project, image);
  if (!foundImage || foundImage === 'ambiguous') {
    throw new TerminalError(
      foundImage === 'ambiguous' ? `more than one image is named ${image}` : `image ${image} not found`,
      'InvalidMachineSpec',
    );
  }
  const flavorRef = osm.spec.flavorID ?? osm.spec.flavor ?? '';
  const flavor = await lookUpFlavor(lookups, cloud, project, flavorRef);
  if (!flavor || flavor === 'ambiguous') {
    throw new TerminalError(
      flavor === 'ambiguous' ? `more than one flavor is named ${flavorRef}` : `flavor ${flavorRef} not found`,
      'InvalidMachineSpec',
    );
  }
  const networkID = osc.status.network?.id;
  if (!networkID) throw new Error('the cluster network is not known yet');
  const subnetID = osc.status.network?.subnets?.[0]?.id;
  const controlPlane = CapiLabels.controlPlane in machine.metadata.labels;
  const sg = controlPlane ? osc.status.controlPlaneSecurityGroup : osc.status.workerSecurityGroup;
  const resolved = {
    imageID: foundImage.id,
    flavorID: flavor.id,
    networkID,
    ...(subnetID ? { subnetID } : {}),
    securityGroupIDs: sg ? [sg.id] : [],
  };
  await record({ resolved });
  return { resolved, fresh: newSinceStart };
}

type Resolved = NonNullable<OpenStackMachineStatus['resolved']>;

/** The machine's port on the cluster network. */
export async function ensurePort(
  cloud: CloudClients,
  osm: OpenStackMachineObject,
  resolved: Resolved,
  tags: string[],
  record: RecordMachine,
  fresh: boolean,
): Promise<{ id: string; ip?: string }> {
  const known = osm.status.resources?.ports?.[0]?.id;
  if (known) {
    try {
      const p = await cloud.network.getPort(known);
      return { id: p.id, ...(p.fixedIps[0]?.ipAddress ? { ip: p.fixedIps[0].ipAddress } : {}) };
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
  const name = portName(osm);
  const existing = fresh
    ? undefined
    : (await cloud.network.listPorts({ name, networkId: resolved.networkID }))[0];
  const port =
    existing ??
    (await cloud.network.createPort({
      networkId: resolved.networkID,
      name,
      ...(resolved.subnetID ? { fixedIps: [{ subnetId: resolved.subnetID }] } : {}),
      securityGroupIds: resolved.securityGroupIDs,
      description: `Created by Magnetar for machine ${osm.metadata.name}`,
      tags,
    }));
  await record({ resources: { ...osm.status.resources, ports: [{ id: port.id }] } });
  return { id: port.id, ...(port.fixedIps[0]?.ipAddress ? { ip: port.fixedIps[0].ipAddress } : {}) };
}

/** A port's first fixed address; undefined when it has none or is gone. */
export async function portAddress(cloud: CloudClients, id: string): Promise<string | undefined> {
  try {
    return (await cloud.network.getPort(id)).fixedIps[0]?.ipAddress;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** The boot volume, when the spec asks for one; undefined → boot from image. Waits while `creating`. */
export async function ensureRootVolume(
  cloud: CloudClients,
  osm: OpenStackMachineObject,
  machine: MachineObject,
  imageId: string,
  record: RecordMachine,
  fresh: boolean,
): Promise<{ id: string; ready: boolean; status: string } | undefined> {
  const spec = osm.spec.rootVolume;
  if (!spec) return undefined;
  let vol;
  const known = osm.status.resources?.volumeID;
  if (known) {
    try {
      vol = await cloud.volume.getVolume(known);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
  if (!vol) {
    if (!fresh) vol = (await cloud.volume.listVolumes({ name: rootVolumeName(osm) }))[0];
    vol ??= await cloud.volume.createVolume({
      name: rootVolumeName(osm),
      sizeGb: spec.sizeGiB,
      imageId,
      ...(spec.type ? { volumeType: spec.type } : {}),
      ...((spec.availabilityZone ?? machine.spec.failureDomain)
        ? { availabilityZone: spec.availabilityZone ?? machine.spec.failureDomain }
        : {}),
      description: `Boot volume of machine ${osm.metadata.name} (Magnetar)`,
    });
    await record({ resources: { ...osm.status.resources, volumeID: vol.id } });
  }
  if (vol.status === 'error')
    throw new TerminalError(`boot volume ${rootVolumeName(osm)} went to error`, 'VolumeError');
  return { id: vol.id, ready: vol.status === 'available' || vol.status === 'in-use', status: vol.status };
}
