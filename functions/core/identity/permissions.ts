import { ApiError } from '../common/errors.js';
import { scopesAllow, type Domain, type Scope, type Verb } from './scopes.js';
import { getEntityValue, listEntityValues } from '../store/entities.js';
import type { Principal } from './auth.js';
import type { CoreDeps } from '../deps.js';
import type { Job, User } from '../../ports.js';
import type { Folder, Role } from './identity-documents.js';

// The documents live in a leaf (identity-documents.ts); the modules that manage them import them from here.
export type { Folder, Group, Member, Role } from './identity-documents.js';

/**
 * Who may do what inside a workspace: the one place the service decides access (spec 5; Windmill's
 * model). Instance admins may do everything. Otherwise the caller must be a member of the
 * workspace, and:
 *
 * - role `admin`: everything in the workspace;
 * - role `developer`: reads and runs what they have any right on, writes what they own or may write;
 * - role `operator`: reads and runs what they have any right on, writes nothing.
 *
 * Rights on an item follow its path: `u/<user>/...` belongs to that user alone; `f/<folder>/...`
 * follows the folder's `owners` (users `u/x` or groups `g/y`, who may also manage the folder) and
 * `extra_perms` (`true` writer, `false` reader). Every member is in the group `all`.
 * A token narrowed to a workspace or to scopes can never do more than they allow.
 */

export const ROLES: readonly Role[] = ['admin', 'developer', 'operator'];

/** Implicit group of every member of a workspace. */
export const ALL_GROUP = 'all';

type Right = 'owner' | 'writer' | 'reader';
const RANK: Record<Right, number> = { reader: 1, writer: 2, owner: 3 };

/** Items addressed by path, whose rights follow the path's owner or folder. */
const ITEM_DOMAINS: ReadonlySet<Domain> = new Set(['scripts', 'flows', 'apps', 'jobs', 'resources', 'variables', 'http_triggers', 'schedules']);

export class Rights {
  private constructor(
    readonly principal: Principal,
    readonly workspaceId: string,
    /** null: not a member (and not an instance admin). */
    readonly role: Role | 'instance_admin' | null,
    private readonly groups: ReadonlySet<string>,
    private readonly folders: ReadonlyMap<string, Folder>,
  ) {}

  static async load(deps: Pick<CoreDeps, 'store'>, principal: Principal, workspaceId: string): Promise<Rights> {
    if (principal.isSuperadmin) return new Rights(principal, workspaceId, 'instance_admin', new Set(), new Map());
    const member = await getEntityValue(deps.store, 'member', workspaceId, principal.username);
    if (!member || member.role === 'admin') return new Rights(principal, workspaceId, member?.role ?? null, new Set(), new Map());
    const [groupEntities, folderEntities] = await Promise.all([
      listEntityValues(deps.store, 'group', workspaceId),
      listEntityValues(deps.store, 'folder', workspaceId),
    ]);
    const groups = new Set([ALL_GROUP]);
    for (const e of groupEntities) if (e.value.members.includes(principal.username)) groups.add(e.key);
    const folders = new Map(folderEntities.map((e) => [e.key, e.value]));
    return new Rights(principal, workspaceId, member.role, groups, folders);
  }

  /** What `user` may do in the workspace acting as themselves (no caller at hand: a trigger's author, another member), narrowed to `scopes`. */
  static ofUser(deps: Pick<CoreDeps, 'store'>, user: Pick<User, 'username' | 'is_admin'>, workspaceId: string, scopes: Scope[] | null = null): Promise<Rights> {
    const principal: Principal = { username: user.username, isSuperadmin: user.is_admin, workspaceId, scopes, via: 'token', jobId: null, tokenHash: null };
    return Rights.load(deps, principal, workspaceId);
  }

  /** Whether the caller may `verb` in `domain`, for the item path (or folder/group name) given. */
  can(domain: Domain, verb: Verb, path: string | null = null): boolean {
    return this.tokenAllows(domain, verb, path) && this.identityAllows(domain, verb, path);
  }

  /** A job's creator may always read and cancel it; others need rights on the job's script or flow. */
  canJob(job: Job, verb: 'read' | 'cancel'): boolean {
    if (!this.tokenAllows('jobs', verb, job.script_path)) return false;
    return (job.created_by === this.principal.username && this.role !== null) || this.identityAllows('jobs', verb, job.script_path);
  }

  check(domain: Domain, verb: Verb, path: string | null = null): this {
    if (!this.can(domain, verb, path)) throw this.denial(domain, verb, path);
    return this;
  }

  checkJob(job: Job, verb: 'read' | 'cancel'): this {
    if (!this.canJob(job, verb)) throw this.denial('jobs', verb, job.script_path);
    return this;
  }

  /** Whether the caller may act in this workspace at all: a member (or instance admin) whose token is not limited to another workspace. */
  entersWorkspace(): boolean {
    return this.role !== null && (this.principal.workspaceId === null || this.principal.workspaceId === this.workspaceId);
  }

  /** The 403 of a caller who may not enter the workspace, the same whether it exists or not. */
  workspaceDenial(): ApiError {
    if (this.role === null) return new ApiError(403, 'forbidden', `${this.principal.username} is not a member of workspace ${this.workspaceId}`);
    return new ApiError(403, 'forbidden', `this token does not allow workspace ${this.workspaceId}`);
  }

  denial(domain: Domain, verb: Verb, path: string | null): ApiError {
    const what = `${domain}:${verb}${path ? `:${path}` : ''}`;
    if (!this.tokenAllows(domain, verb, path)) {
      return new ApiError(403, 'forbidden', `this token does not allow ${what}${this.principal.workspaceId ? ` in workspace ${this.workspaceId}` : ''}`);
    }
    if (this.role === null) return new ApiError(403, 'forbidden', `${this.principal.username} is not a member of workspace ${this.workspaceId}`);
    return new ApiError(403, 'forbidden', `${this.principal.username} (${this.role}) may not ${verb} ${path ? `${domain} at ${path}` : domain}`);
  }

  private tokenAllows(domain: Domain, verb: Verb, path: string | null): boolean {
    const p = this.principal;
    if (p.workspaceId !== null && p.workspaceId !== this.workspaceId) return false;
    if (p.scopes !== null && !scopesAllow(p.scopes, domain, verb, path)) return false;
    return true;
  }

  private identityAllows(domain: Domain, verb: Verb, path: string | null): boolean {
    if (this.role === 'instance_admin' || this.role === 'admin') return true;
    if (this.role === null) return false;
    if (ITEM_DOMAINS.has(domain)) {
      // Without a path the question is about the domain as a whole (listing, resource types).
      if (path === null) return verb === 'read' || verb === 'run' || this.role !== 'operator';
      const right = this.rightOn(path);
      if (verb === 'read' || verb === 'run') return right !== null;
      return this.role !== 'operator' && right !== null && RANK[right] >= RANK.writer;
    }
    switch (domain) {
      case 'folders': {
        if (verb === 'read') {
          // Anyone may list; a folder itself is seen by its owners and those its rights name (as in Windmill).
          const folder = path === null ? undefined : this.folders.get(path);
          return folder === undefined || this.folderRight(folder) !== null;
        }
        if (this.role === 'operator') return false;
        const folder = path === null ? undefined : this.folders.get(path);
        // Any developer may create a folder (becoming its owner); changing one needs ownership.
        return folder === undefined || this.folderRight(folder) === 'owner';
      }
      case 'workspaces':
      case 'groups':
      case 'users':
        return verb === 'read';
      default:
        return false;
    }
  }

  /** The caller's right on an item path, or null for none. */
  rightOn(path: string): Right | null {
    if (this.role === 'instance_admin' || this.role === 'admin') return 'owner';
    const [kind, owner] = path.split('/');
    if (kind === 'u') return owner === this.principal.username ? 'owner' : null;
    if (kind === 'f') {
      const folder = this.folders.get(owner);
      return folder ? this.folderRight(folder) : null;
    }
    return null;
  }

  private folderRight(folder: Folder): Right | null {
    const mine = [`u/${this.principal.username}`, ...[...this.groups].map((g) => `g/${g}`)];
    if (folder.owners.some((o) => mine.includes(o))) return 'owner';
    let best: Right | null = null;
    for (const who of mine) {
      const write = folder.extra_perms[who];
      if (write === true) return 'writer';
      if (write === false) best = 'reader';
    }
    return best;
  }
}

/** Loads the caller's rights in the workspace and checks one access; throws 403 when denied. */
export async function authorize(deps: Pick<CoreDeps, 'store'>, principal: Principal, workspaceId: string, domain: Domain, verb: Verb, path: string | null = null): Promise<Rights> {
  return (await Rights.load(deps, principal, workspaceId)).check(domain, verb, path);
}
