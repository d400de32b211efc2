/** Annotations the controllers of this package put on the objects they create. */

/** On an infrastructure machine: the template it was cloned from (Cluster API's name). */
export const OPENSTACK_MACHINE_CLONED_FROM = 'cluster.x-k8s.io/cloned-from-name';

/** On a control-plane Machine: hash of the KubeadmControlPlane's kubeadm config it was made from. */
export const KCP_CONFIG_HASH = 'controlplane.cluster.x-k8s.io/kubeadm-config-hash';

/** On a MachineDeployment/MachineSet: Magnum node group name (for status messages). */
export const NODE_GROUP_ANNOTATION = 'magnum.magnetar.io/nodegroup';
