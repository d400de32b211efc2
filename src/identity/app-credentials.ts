import { ConflictError, InputError, type AuthContext } from '../domain/index.ts';
import { claimOp, commitAndSync, deleteOp, newIdentityObject, releaseOp, type IdentityCore } from './core.ts';
import type { ApplicationCredentialSpec } from './kinds.ts';
import { forbidden, notFound, requireAdminOrSelf } from './policy.ts';
import { hashSecret, newId, newSecret } from './secrets.ts';
import { decodeToken } from './token-codec.ts';
import type { Rec } from './view.ts';

/** A role named by id or by name. */
export type RoleRef = { id: string } | { name: string };

/** `POST /v3/users/{id}/application_credentials`. */
export interface AppCredInput {
  name: string;
  description?: string | null;
  /** Generated (and returned once) when absent. */
  secret?: string | null;
  /** Expiry in ms since the epoch; null or absent for never. */
  expiresAtMs?: number | null;
  /** A subset of the caller's roles on the project; all of them when absent or empty. */
  roles?: RoleRef[];
  /** May the credential create further credentials and rescope? @default false */
  unrestricted?: boolean;
}

/** A created credential: the only time its secret is shown. */
export interface CreatedAppCred {
  cred: Rec<ApplicationCredentialSpec>;
  secret: string;
}

function duplicate(name: string): ConflictError {
  return new ConflictError(
    `Conflict occurred attempting to store application_credential - Duplicate name, ${name}.`,
    {
      code: 'Duplicate',
    },
  );
}

/** Application credentials: a user's secret for automation, tied to one project and a subset of roles. */
export class AppCredentials {
  constructor(private readonly core: IdentityCore) {}

  /**
   * Create a credential for the caller, on the project of the caller's token. A credential
   * made from a restricted credential's token is refused (as Keystone does).
   */
  async create(caller: AuthContext, userId: string, input: AppCredInput): Promise<CreatedAppCred> {
    if (caller.userId !== userId) {
      throw forbidden(
        'identity:create_application_credential',
        'Application credentials can only be created for yourself.',
      );
    }
    const projectId = caller.projectId;
    if (!projectId)
      throw forbidden('identity:create_application_credential', 'A project-scoped token is required.');
    const via = this.viaAppCred(caller);
    if (via && !via.spec.unrestricted) {
      throw forbidden(
        'identity:create_application_credential',
        'A restricted application credential cannot create application credentials.',
      );
    }
    if (!input.name) throw new InputError("Invalid input for field 'name': a non-empty name is required.");
    const v = this.core.view;
    const held = new Map<string, string>();
    for (const name of caller.roles) {
      const r = v.roleByName(name);
      if (r) held.set(r.id, name);
    }
    let roleIds: string[];
    if (!input.roles || input.roles.length === 0) roleIds = [...held.keys()];
    else {
      roleIds = input.roles.map((ref) => {
        const role = 'id' in ref ? v.roles.get(ref.id) : v.roleByName(ref.name);
        const label = 'id' in ref ? ref.id : ref.name;
        if (!role) throw notFound('role', label);
        if (!held.has(role.id)) {
          throw forbidden(
            'identity:create_application_credential',
            `You do not have the role ${role.spec.name} on this project.`,
          );
        }
        return role.id;
      });
    }
    const now = this.core.clock.now();
    if (input.expiresAtMs !== undefined && input.expiresAtMs !== null && input.expiresAtMs <= now) {
      throw new InputError("Invalid input for field 'expires_at': the expiry is in the past.", {
        code: 'Expired',
      });
    }
    if ([...v.appCreds.values()].some((c) => c.spec.userId === userId && c.spec.name === input.name))
      throw duplicate(input.name);
    const secret = input.secret || newSecret();
    const id = newId();
    const spec: ApplicationCredentialSpec = {
      name: input.name,
      userId,
      projectId,
      secretHash: await hashSecret(secret, this.core.scryptCost),
      description: input.description ?? null,
      expiresAtMs: input.expiresAtMs ?? null,
      roleIds: [...new Set(roleIds)],
      unrestricted: input.unrestricted ?? false,
    };
    await commitAndSync(
      this.core,
      [
        claimOp('application-credential', userId, input.name, id),
        { op: 'create', object: newIdentityObject('ApplicationCredential', id, spec) },
      ],
      () => duplicate(input.name),
    );
    return { cred: { id, spec }, secret };
  }

  list(caller: AuthContext, userId: string, name?: string): Rec<ApplicationCredentialSpec>[] {
    requireAdminOrSelf(caller, userId, 'identity:list_application_credentials');
    if (!this.core.view.users.has(userId)) throw notFound('user', userId);
    return [...this.core.view.appCreds.values()].filter(
      (c) => c.spec.userId === userId && (name === undefined || c.spec.name === name),
    );
  }

  get(caller: AuthContext, userId: string, id: string): Rec<ApplicationCredentialSpec> {
    requireAdminOrSelf(caller, userId, 'identity:get_application_credential');
    const c = this.core.view.appCreds.get(id);
    if (!c || c.spec.userId !== userId) throw notFound('application credential', id);
    return c;
  }

  /** Delete a credential; tokens obtained with it stop working. */
  async remove(caller: AuthContext, userId: string, id: string): Promise<void> {
    const c = this.get(caller, userId, id);
    const via = this.viaAppCred(caller);
    if (via && !via.spec.unrestricted) {
      throw forbidden(
        'identity:delete_application_credential',
        'A restricted application credential cannot delete application credentials.',
      );
    }
    await commitAndSync(this.core, [
      deleteOp('ApplicationCredential', id),
      releaseOp('application-credential', userId, c.spec.name),
    ]);
  }

  /** The credential the caller's token came from, if any. */
  private viaAppCred(caller: AuthContext): Rec<ApplicationCredentialSpec> | undefined {
    const id = decodeToken(caller.token, this.core.view.keys)?.appCredId;
    return id === undefined ? undefined : this.core.view.appCreds.get(id);
  }
}
