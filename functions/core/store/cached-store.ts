import type {
  Delivery,
  Entity,
  EntityKind,
  Job,
  JobCompletion,
  JobListFilter,
  JobQuery,
  OutboxEvent,
  ScriptVersion,
  Store,
  TokenRecord,
  User,
  Workspace,
} from '../../ports.js';
import { deepFreeze } from '../common/deep-freeze.js';
import { keyTooLong, MAX_KEY_BYTES } from '../common/key-bytes.js';

/**
 * The store as the service reads it on every request. A webhook call reads the same few rows each
 * time — the token, its user, the workspace, membership and groups, the head of the path (flow or
 * script), the workspace's job limits — and those change rarely. They are kept here for `ttlMs`.
 *
 * Every write through this store forgets, at once and whatever its outcome, what it may have
 * changed: a revoked token, a changed user, a new script version or a changed setting take effect
 * on the next request of this process. A read that raced with such a write is not kept. Another
 * process writing the same database (only the AWS shell has several: one per Lambda execution
 * environment) is seen within `ttlMs`; that is the bound on how long a token revoked elsewhere
 * may still be accepted here, so it is kept short (README: Benchmark). Misses of tokens and
 * scripts are not kept (a guessed token is looked up each time); misses of settings are, since
 * "no limits set" is the common answer.
 *
 * Everything else passes straight through. Values handed out are frozen: they are shared.
 *
 * A name longer than MAX_KEY_BYTES (core/common/key-bytes.ts) names nothing: reads and deletes by
 * it answer "none" without asking the store, which may not even take it as a key (DynamoDB's 1,024
 * bytes), and a write by it is refused with the same error in every shell.
 */
export class CachedStore implements Store {
  /** What both shells use: short, as it bounds how stale another process's write may be seen. */
  static readonly TTL_MS = 1000;

  private readonly tokens: TtlCache<TokenRecord | null>;
  private readonly users: TtlCache<User | null>;
  private readonly workspaces: TtlCache<Workspace | null>;
  private readonly heads: TtlCache<ScriptVersion | null>;
  private readonly entities: TtlCache<Entity | null>;
  private readonly entityLists: TtlCache<Entity[]>;

  constructor(
    private readonly inner: Store,
    options: { ttlMs?: number; now?: () => number } = {},
  ) {
    const make = <V>() => new TtlCache<V>(options.ttlMs ?? CachedStore.TTL_MS, options.now ?? (() => performance.now()));
    this.tokens = make();
    this.users = make();
    this.workspaces = make();
    this.heads = make();
    this.entities = make();
    this.entityLists = make();
  }

  createWorkspace(ws: Workspace) {
    return this.inner.createWorkspace(ws).finally(() => this.workspaces.forget(ws.id));
  }

  getWorkspace(id: string) {
    return this.workspaces.read(id, () => this.inner.getWorkspace(id));
  }

  listWorkspaces() {
    return this.inner.listWorkspaces();
  }

  listMemberWorkspaces(username: string) {
    return this.inner.listMemberWorkspaces(username);
  }

  listInvitesOf(username: string) {
    return this.inner.listInvitesOf(username);
  }

  setObjectStorage(id: string, enabled: boolean) {
    return this.inner.setObjectStorage(id, enabled).finally(() => this.workspaces.forget(id));
  }

  insertScriptVersion(v: ScriptVersion, expectedLatest: string | null, events?: OutboxEvent[]) {
    return this.inner.insertScriptVersion(v, expectedLatest, events).finally(() => this.heads.forget(headKey(v.workspace_id, v.path)));
  }

  getLatestScript(workspaceId: string, path: string) {
    if (keyTooLong(path)) return Promise.resolve(null);
    return this.heads.read(headKey(workspaceId, path), () => this.inner.getLatestScript(workspaceId, path), (script) => script !== null);
  }

  getScriptByHash(workspaceId: string, hash: string) {
    if (keyTooLong(hash)) return Promise.resolve(null);
    return this.inner.getScriptByHash(workspaceId, hash);
  }

  listLatestScripts(workspaceId: string) {
    return this.inner.listLatestScripts(workspaceId);
  }

  deleteScriptPath(workspaceId: string, path: string, events?: OutboxEvent[]) {
    if (keyTooLong(path)) return Promise.resolve(0);
    return this.inner.deleteScriptPath(workspaceId, path, events).finally(() => this.heads.forget(headKey(workspaceId, path)));
  }

  insertJob(job: Job) {
    return this.inner.insertJob(job);
  }

  getJob(workspaceId: string, id: string) {
    return this.inner.getJob(workspaceId, id);
  }

  findJobById(id: string) {
    return this.inner.findJobById(id);
  }

  getJobStatus(workspaceId: string, id: string) {
    return this.inner.getJobStatus(workspaceId, id);
  }

  listJobs(filter: JobListFilter) {
    return this.inner.listJobs(filter);
  }

  queryJobs(query: JobQuery) {
    return this.inner.queryJobs(query);
  }

  claimJob(id: string, startedAt: string, leaseUntil: string) {
    return this.inner.claimJob(id, startedAt, leaseUntil);
  }

  releaseHeldJob(id: string) {
    return this.inner.releaseHeldJob(id);
  }

  countRunJobs(id: string, count: number, limit: number) {
    return this.inner.countRunJobs(id, count, limit);
  }

  appendJobStream(id: string, chunk: string) {
    return this.inner.appendJobStream(id, chunk);
  }

  appendJobLogs(id: string, chunk: string) {
    return this.inner.appendJobLogs(id, chunk);
  }

  completeJob(id: string, completion: JobCompletion, completedAt: string) {
    return this.inner.completeJob(id, completion, completedAt);
  }

  scrubJob(id: string) {
    return this.inner.scrubJob(id);
  }

  requeueInterrupted() {
    return this.inner.requeueInterrupted();
  }

  listStaleJobs(status: 'queued' | 'running', before: string, limit: number) {
    return this.inner.listStaleJobs(status, before, limit);
  }

  countQueuedJobs(workspaceId: string, atMost: number) {
    return this.inner.countQueuedJobs(workspaceId, atMost);
  }

  createUser(u: User, events?: OutboxEvent[]) {
    return this.inner.createUser(u, events).finally(() => this.users.forget(u.username));
  }

  getUser(username: string) {
    return this.users.read(username, () => this.inner.getUser(username), (user) => user !== null);
  }

  listUsers() {
    return this.inner.listUsers();
  }

  updateUser(u: User) {
    return this.inner.updateUser(u).finally(() => this.users.forget(u.username));
  }

  putToken(t: TokenRecord) {
    return this.inner.putToken(t).finally(() => this.tokens.forget(t.token_hash));
  }

  getToken(tokenHash: string) {
    return this.tokens.read(tokenHash, () => this.inner.getToken(tokenHash), (token) => token !== null);
  }

  listTokens(owner: string) {
    return this.inner.listTokens(owner);
  }

  deleteToken(tokenHash: string, events?: OutboxEvent[]) {
    return this.inner.deleteToken(tokenHash, events).finally(() => this.tokens.forget(tokenHash));
  }

  markTokenExpiryNotice(tokenHash: string, at: string, events?: OutboxEvent[]) {
    return this.inner.markTokenExpiryNotice(tokenHash, at, events).finally(() => this.tokens.forget(tokenHash));
  }

  createEntity(e: Entity, events?: OutboxEvent[], jobs?: Job[]) {
    if (keyTooLong(e.key)) return Promise.reject(keyError(e));
    return this.inner.createEntity(e, events, jobs).finally(() => this.forgetEntity(e.kind, e.workspace_id, e.key));
  }

  replaceEntity(e: Entity, expectedVersion: number, events?: OutboxEvent[], jobs?: Job[]) {
    if (keyTooLong(e.key)) return Promise.reject(keyError(e));
    // Also when the replace lost a race: the version this process held is then stale.
    return this.inner.replaceEntity(e, expectedVersion, events, jobs).finally(() => this.forgetEntity(e.kind, e.workspace_id, e.key));
  }

  getEntity(kind: EntityKind, workspaceId: string, key: string) {
    if (keyTooLong(key)) return Promise.resolve(null);
    if (!CACHED_KINDS.has(kind)) return this.inner.getEntity(kind, workspaceId, key);
    return this.entities.read(entityKey(kind, workspaceId, key), () => this.inner.getEntity(kind, workspaceId, key));
  }

  getEntityStamp(kind: EntityKind, workspaceId: string, key: string) {
    if (keyTooLong(key)) return Promise.resolve(null);
    return this.inner.getEntityStamp(kind, workspaceId, key);
  }

  listEntities(kind: EntityKind, workspaceId: string) {
    if (!CACHED_KINDS.has(kind)) return this.inner.listEntities(kind, workspaceId);
    return this.entityLists.read(entityListKey(kind, workspaceId), () => this.inner.listEntities(kind, workspaceId));
  }

  deleteEntity(kind: EntityKind, workspaceId: string, key: string, events?: OutboxEvent[]) {
    if (keyTooLong(key)) return Promise.resolve(false);
    return this.inner.deleteEntity(kind, workspaceId, key, events).finally(() => this.forgetEntity(kind, workspaceId, key));
  }

  insertDeliveries(events: OutboxEvent[]) {
    return this.inner.insertDeliveries(events);
  }

  listPendingDeliveries(limit: number) {
    return this.inner.listPendingDeliveries(limit);
  }

  getDelivery(scope: string, id: string): Promise<Delivery | null> {
    return this.inner.getDelivery(scope, id);
  }

  listDeliveries(scope: string, limit: number) {
    return this.inner.listDeliveries(scope, limit);
  }

  replaceDelivery(d: Delivery, expectedVersion: number) {
    return this.inner.replaceDelivery(d, expectedVersion);
  }

  private forgetEntity(kind: EntityKind, workspaceId: string, key: string): void {
    this.entities.forget(entityKey(kind, workspaceId, key));
    this.entityLists.forget(entityListKey(kind, workspaceId));
  }
}

/**
 * Settings and definitions read on every run (rights, the head of a flow path and its versions,
 * job limits). Run state (flow runs, waits, approvals, sequences) is never kept: other processes
 * move it on, and it is read to decide what happens next.
 */
const CACHED_KINDS: ReadonlySet<EntityKind> = new Set<EntityKind>(['member', 'group', 'folder', 'flow', 'flow_version', 'job_limits']);

/** A write by a name no read would find: a rule of the core was missed before it (its names are bounded). */
function keyError(e: Entity): Error {
  return new Error(`the ${e.kind} key ${JSON.stringify(e.key.slice(0, 100))}... is longer than ${MAX_KEY_BYTES} bytes: it cannot be stored`);
}

const headKey = (workspaceId: string, path: string) => `${workspaceId}\n${path}`;
const entityKey = (kind: EntityKind, workspaceId: string, key: string) => `${kind}\n${workspaceId}\n${key}`;
const entityListKey = (kind: EntityKind, workspaceId: string) => `${kind}\n${workspaceId}`;

const MAX_ENTRIES = 2000;

/** Values by key for a while; `forget` also keeps a read that was under way from being stored. */
class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; until: number }>();
  private writes = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number,
  ) {}

  async read(key: string, load: () => Promise<V>, keep: (value: V) => boolean = () => true): Promise<V> {
    const hit = this.entries.get(key);
    if (hit && hit.until > this.now()) return hit.value;
    const writesBefore = this.writes;
    const value = await load();
    if (this.writes === writesBefore && keep(value)) {
      this.entries.delete(key);
      this.entries.set(key, { value: deepFreeze(value), until: this.now() + this.ttlMs });
      if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    }
    return value;
  }

  forget(key: string): void {
    this.writes++;
    this.entries.delete(key);
  }
}
