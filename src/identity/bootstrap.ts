import { ConflictError } from '../domain/index.ts';
import type { WriteOp } from '../store/index.ts';
import { claimOp, commitAndSync, newIdentityObject, type IdentityCore } from './core.ts';
import {
  assignmentName,
  type AssignmentScope,
  type DomainSpec,
  type ProjectSpec,
  type RoleSpec,
  type UserSpec,
} from './kinds.ts';
import { hashSecret, newId, newPassword } from './secrets.ts';

/** Credentials created on the first start: the only moment their passwords are known. */
export interface BootstrapCredential {
  /** Entry name in clouds.yaml, e.g. `magnetar-demo-sa`. */
  cloud: string;
  username: string;
  password: string;
  projectName: string;
  userDomainName: string;
  projectDomainName: string;
}

/** Outcome of {@link bootstrapIdentity}. */
export interface BootstrapResult {
  /** True when this call created the initial identity state. */
  firstStart: boolean;
  /** Passwords of the users created now (empty on later starts). */
  credentials: BootstrapCredential[];
}

/** The fixed names of the initial state. */
export const BOOTSTRAP = {
  domainId: 'default',
  domainName: 'Default',
  adminProject: 'admin',
  demoProject: 'demo',
  adminUser: 'admin',
  demoUser: 'demo',
  demoServiceAccount: 'demo-sa',
  serviceUser: 'magnetar',
} as const;

interface PlannedUser {
  name: string;
  project: string;
  role: 'admin' | 'member';
  serviceAccount: boolean;
  /** clouds.yaml entry; none for the internal service user, which never logs in with a password. */
  cloud?: string;
  system?: boolean;
}

const USERS: PlannedUser[] = [
  {
    name: BOOTSTRAP.adminUser,
    project: BOOTSTRAP.adminProject,
    role: 'admin',
    serviceAccount: false,
    cloud: 'magnetar-admin',
    system: true,
  },
  {
    name: BOOTSTRAP.demoUser,
    project: BOOTSTRAP.demoProject,
    role: 'member',
    serviceAccount: false,
    cloud: 'magnetar-demo',
  },
  {
    name: BOOTSTRAP.demoServiceAccount,
    project: BOOTSTRAP.demoProject,
    role: 'member',
    serviceAccount: true,
    cloud: 'magnetar-demo-sa',
  },
  { name: BOOTSTRAP.serviceUser, project: BOOTSTRAP.adminProject, role: 'admin', serviceAccount: true },
];

/**
 * Create the initial identity state once per deployment, in one atomic commit: domain
 * `Default`; roles admin ⊃ member ⊃ reader; projects `admin` and `demo`; users `admin`
 * (admin, also on the system), `demo` (member), `demo-sa` (member, service account) and
 * Magnetar's service user (admin on `admin`, no password). Later calls change nothing.
 */
export async function bootstrapIdentity(core: IdentityCore): Promise<BootstrapResult> {
  await core.view.sync();
  if (core.view.domains.has(BOOTSTRAP.domainId)) return { firstStart: false, credentials: [] };

  const d = BOOTSTRAP.domainId;
  const ops: WriteOp[] = [];
  const domain: DomainSpec = { name: BOOTSTRAP.domainName, description: 'The default domain', enabled: true };
  ops.push(claimOp('domain', '', domain.name, d), {
    op: 'create',
    object: newIdentityObject('Domain', d, domain),
  });

  const roleIds = { admin: newId(), member: newId(), reader: newId() };
  const roles: [keyof typeof roleIds, RoleSpec][] = [
    ['reader', { name: 'reader', description: 'Read-only access', implies: [] }],
    ['member', { name: 'member', description: 'Use a project: implies reader', implies: [roleIds.reader] }],
    [
      'admin',
      { name: 'admin', description: 'Administer the cloud: implies member', implies: [roleIds.member] },
    ],
  ];
  for (const [key, spec] of roles) {
    ops.push(claimOp('role', '', spec.name, roleIds[key]), {
      op: 'create',
      object: newIdentityObject('Role', roleIds[key], spec),
    });
  }

  const projectIds: Record<string, string> = {};
  for (const name of [BOOTSTRAP.adminProject, BOOTSTRAP.demoProject]) {
    const id = newId();
    projectIds[name] = id;
    const spec: ProjectSpec = {
      name,
      domainId: d,
      description:
        name === BOOTSTRAP.adminProject ? 'Bootstrap project for administering the cloud' : 'Demo project',
      enabled: true,
      tags: [],
      extra: {},
    };
    ops.push(claimOp('project', d, name, id), {
      op: 'create',
      object: newIdentityObject('Project', id, spec),
    });
  }

  const credentials: BootstrapCredential[] = [];
  for (const u of USERS) {
    const id = newId();
    const projectId = projectIds[u.project]!;
    const password = u.cloud ? newPassword() : undefined;
    const spec: UserSpec = {
      name: u.name,
      domainId: d,
      enabled: true,
      ...(password ? { passwordHash: await hashSecret(password, core.scryptCost) } : {}),
      defaultProjectId: projectId,
      description: u.cloud ? `Created on first start` : "Magnetar's internal service user",
      serviceAccount: u.serviceAccount,
      extra: {},
    };
    ops.push(claimOp('user', d, u.name, id), { op: 'create', object: newIdentityObject('User', id, spec) });
    const scopes: AssignmentScope[] = [
      { type: 'project', id: projectId },
      ...(u.system ? [{ type: 'system' } as const] : []),
    ];
    for (const scope of scopes) {
      const a = { userId: id, roleId: roleIds[u.role], scope };
      ops.push({ op: 'create', object: newIdentityObject('RoleAssignment', assignmentName(a), a) });
    }
    if (u.cloud && password) {
      credentials.push({
        cloud: u.cloud,
        username: u.name,
        password,
        projectName: u.project,
        userDomainName: BOOTSTRAP.domainName,
        projectDomainName: BOOTSTRAP.domainName,
      });
    }
  }

  try {
    await commitAndSync(core, ops);
  } catch (err) {
    // Another process bootstrapped at the same moment: its state stands, ours was not written.
    if (err instanceof ConflictError && core.view.domains.has(BOOTSTRAP.domainId))
      return { firstStart: false, credentials: [] };
    throw err;
  }
  return { firstStart: true, credentials };
}
