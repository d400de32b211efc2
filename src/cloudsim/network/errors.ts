import { ConflictError, InputError, NotAllowedError, NotFoundError } from '../../domain/index.ts';

/**
 * Neutron's errors, with its exception class names as `code` (rendered as NeutronError `type`)
 * and its messages.
 */
export const neutronErrors = {
  networkNotFound: (id: string) =>
    new NotFoundError(`Network ${id} could not be found.`, { code: 'NetworkNotFound' }),
  subnetNotFound: (id: string) =>
    new NotFoundError(`Subnet ${id} could not be found.`, { code: 'SubnetNotFound' }),
  portNotFound: (id: string) => new NotFoundError(`Port ${id} could not be found.`, { code: 'PortNotFound' }),
  routerNotFound: (id: string) =>
    new NotFoundError(`Router ${id} could not be found`, { code: 'RouterNotFound' }),
  securityGroupNotFound: (id: string) =>
    new NotFoundError(`Security group ${id} does not exist`, { code: 'SecurityGroupNotFound' }),
  securityGroupRuleNotFound: (id: string) =>
    new NotFoundError(`Security group rule ${id} does not exist`, { code: 'SecurityGroupRuleNotFound' }),
  floatingIpNotFound: (id: string) =>
    new NotFoundError(`Floating IP ${id} could not be found`, { code: 'FloatingIPNotFound' }),
  networkInUse: (id: string) =>
    new ConflictError(
      `Unable to complete operation on network ${id}. There are one or more ports still in use on the network.`,
      {
        code: 'NetworkInUse',
      },
    ),
  subnetInUse: (id: string, reason = 'One or more ports have an IP allocation from this subnet') =>
    new ConflictError(`Unable to complete operation on subnet ${id}: ${reason}.`, { code: 'SubnetInUse' }),
  routerInUse: (id: string, reason = 'still has ports') =>
    new ConflictError(`Router ${id} ${reason}`, { code: 'RouterInUse' }),
  securityGroupInUse: (id: string) =>
    new ConflictError(`Security Group ${id} in use.`, { code: 'SecurityGroupInUse' }),
  cannotRemoveDefault: () =>
    new ConflictError('Insufficient rights for removing default security group.', {
      code: 'SecurityGroupCannotRemoveDefault',
    }),
  ruleExists: (id: string) =>
    new ConflictError(`Security group rule already exists. Rule id is ${id}.`, {
      code: 'SecurityGroupRuleExists',
    }),
  duplicateRuleInPost: () =>
    new ConflictError('Duplicate Security Group Rule in POST.', { code: 'DuplicateSecurityGroupRuleInPost' }),
  overQuota: (resources: string[]) =>
    new ConflictError(`Quota exceeded for resources: [${resources.map((r) => `'${r}'`).join(', ')}].`, {
      code: 'OverQuota',
    }),
  invalidInputFor: (attribute: string, reason: string) =>
    new InputError(`Invalid input for ${attribute}. Reason: ${reason}.`, { code: 'HTTPBadRequest' }),
  invalidInput: (message: string) =>
    new InputError(`Invalid input for operation: ${message}.`, { code: 'InvalidInput' }),
  badRequest: (resource: string, message: string) =>
    new InputError(`Bad ${resource} request: ${message}.`, { code: 'BadRequest' }),
  notAuthorized: (message = 'Not authorized.') => new NotAllowedError(message, { code: 'NotAuthorized' }),
  externalNotReachable: (networkId: string, subnetId: string, portId: string) =>
    new NotFoundError(
      `External network ${networkId} is not reachable from subnet ${subnetId}.  Therefore, cannot associate Port ${portId} with a Floating IP.`,
      { code: 'ExternalGatewayForFloatingIPNotFound' },
    ),
  fipPortAlreadyAssociated: (
    address: string,
    fipId: string,
    portId: string,
    fixedIp: string,
    networkId: string,
  ) =>
    new ConflictError(
      `Cannot associate floating IP ${address} (${fipId}) with port ${portId} using fixed IP ${fixedIp}, as that fixed IP already has a floating IP on external network ${networkId}.`,
      { code: 'FloatingIPPortAlreadyAssociated' },
    ),
  routerInterfaceNotFoundForSubnet: (routerId: string, subnetId: string) =>
    new NotFoundError(`Router ${routerId} has no interface on subnet ${subnetId}`, {
      code: 'RouterInterfaceNotFoundForSubnet',
    }),
  routerInterfaceNotFound: (routerId: string, portId: string) =>
    new NotFoundError(`Router ${routerId} does not have an interface with id ${portId}`, {
      code: 'RouterInterfaceNotFound',
    }),
  routerInterfaceInUseByFip: (routerId: string, subnetId: string) =>
    new ConflictError(
      `Router interface for subnet ${subnetId} on router ${routerId} cannot be deleted, as it is required by one or more floating IPs.`,
      { code: 'RouterInterfaceInUseByFloatingIP' },
    ),
  gatewayInUseByFip: (routerId: string, networkId: string) =>
    new ConflictError(
      `Gateway cannot be updated for router ${routerId}, since a gateway to external network ${networkId} is required by one or more floating IPs.`,
      { code: 'RouterExternalGatewayInUseByFloatingIp' },
    ),
  portInUse: (portId: string, networkId: string, deviceId: string) =>
    new ConflictError(
      `Unable to complete operation on port ${portId} for network ${networkId}. Port already has an attached device ${deviceId}.`,
      {
        code: 'PortInUse',
      },
    ),
};
