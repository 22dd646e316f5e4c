import type { Delivery, Entity, EntityKind, Job, JobCompletion, JobListFilter, JobQuery, OutboxEvent, ScriptVersion, Store, TokenRecord, User, Workspace } from '../../ports.js';
import { newDelivery } from '../../core/documents/records.js';
import { compareJobPositions, matchesJobQuery } from '../../core/store/json-subset.js';

/**
 * The Store port in plain maps: the fast tier's store and the reference of the contract
 * (test/contract/store.contract.ts runs against it, SQLite and DynamoDB alike). Every method runs
 * to completion without awaiting anything, so a check and the write that depends on it happen in
 * one step of the event loop: that is what makes the conditional writes atomic here, as a
 * transaction or a conditional expression does in the other stores. Records go in and come out as
 * copies (a JSON round trip, as the other stores serialise them), so a caller that changes what it
 * wrote or read changes nothing stored.
 */
export class MemoryStore implements Store {
  private readonly workspaces = new Map<string, Workspace>();
  /** By `workspace\0hash`. */
  private readonly scriptVersions = new Map<string, ScriptVersion>();
  /** The latest hash of each `workspace\0path`. */
  private readonly scriptHeads = new Map<string, string>();
  /** In insertion order, which breaks ties of created_at in listings as SQLite's rowid does. */
  private readonly jobs = new Map<string, StoredJob>();
  /** Store.countRunJobs: the jobs counted under each job, by id. */
  private readonly jobsMade = new Map<string, number>();
  private readonly users = new Map<string, User>();
  private readonly tokens = new Map<string, TokenRecord>();
  /** By `kind\0workspace\0key`. */
  private readonly entities = new Map<string, Entity>();
  /** By `scope\0id`. */
  private readonly deliveries = new Map<string, Delivery>();

  async createWorkspace(ws: Workspace) {
    if (this.workspaces.has(ws.id)) return 'exists' as const;
    this.workspaces.set(ws.id, copy(ws));
    return 'created' as const;
  }

  async getWorkspace(id: string) {
    return copyOrNull(this.workspaces.get(id));
  }

  async listWorkspaces() {
    return sortedBy([...this.workspaces.values()], (w) => w.id).map(copy);
  }

  async listMemberWorkspaces(username: string) {
    const ids = new Set([...this.entities.values()].filter((e) => e.kind === 'member' && e.key === username).map((e) => e.workspace_id));
    return sortedBy([...this.workspaces.values()].filter((w) => ids.has(w.id)), (w) => w.id).map(copy);
  }

  async listInvitesOf(username: string) {
    const invites = [...this.entities.values()].filter((e) => e.kind === 'invite' && e.key === username);
    return sortedBy(invites, (e) => e.workspace_id).map(copy);
  }

  async setObjectStorage(id: string, enabled: boolean) {
    const ws = this.workspaces.get(id);
    if (ws) ws.object_storage_enabled = enabled;
  }

  async insertScriptVersion(v: ScriptVersion, expectedLatest: string | null, events: OutboxEvent[] = []) {
    const head = key(v.workspace_id, v.path);
    if ((this.scriptHeads.get(head) ?? null) !== expectedLatest) return false;
    this.scriptVersions.set(key(v.workspace_id, v.hash), copy(v));
    this.scriptHeads.set(head, v.hash);
    this.record(events);
    return true;
  }

  async getLatestScript(workspaceId: string, path: string) {
    const hash = this.scriptHeads.get(key(workspaceId, path));
    return hash === undefined ? null : copyOrNull(this.scriptVersions.get(key(workspaceId, hash)));
  }

  async getScriptByHash(workspaceId: string, hash: string) {
    return copyOrNull(this.scriptVersions.get(key(workspaceId, hash)));
  }

  async listLatestScripts(workspaceId: string) {
    const latest = [...this.scriptHeads.entries()]
      .filter(([head]) => head.startsWith(key(workspaceId, '')))
      .map(([, hash]) => this.scriptVersions.get(key(workspaceId, hash))!);
    return sortedBy(latest, (v) => v.path).map(copy);
  }

  async deleteScriptPath(workspaceId: string, path: string, events: OutboxEvent[] = []) {
    this.scriptHeads.delete(key(workspaceId, path));
    let removed = 0;
    for (const [k, v] of this.scriptVersions) {
      if (v.workspace_id === workspaceId && v.path === path) {
        this.scriptVersions.delete(k);
        removed++;
      }
    }
    if (removed > 0) this.record(events);
    return removed;
  }

  async insertJob(job: Job) {
    this.insertJobNow(job);
  }

  private insertJobNow(job: Job) {
    // A job id is a primary key in every store: inserting it twice is a programming error.
    if (this.jobs.has(job.id)) throw new Error(`job ${job.id} exists`);
    this.jobs.set(job.id, { job: copy(job), leaseUntil: null });
  }

  async getJob(workspaceId: string, id: string) {
    const stored = this.jobs.get(id);
    return stored && stored.job.workspace_id === workspaceId ? copy(stored.job) : null;
  }

  async findJobById(id: string) {
    return copyOrNull(this.jobs.get(id)?.job);
  }

  async getJobStatus(workspaceId: string, id: string) {
    const stored = this.jobs.get(id);
    return stored && stored.job.workspace_id === workspaceId ? stored.job.status : null;
  }

  async listJobs(f: JobListFilter) {
    const matching = [...this.jobs.values()]
      .map((s) => s.job)
      .filter((j) => j.workspace_id === f.workspace_id && (!f.status || j.status === f.status) && (!f.script_path || j.script_path === f.script_path) && (!f.schedule_path || j.schedule_path === f.schedule_path) && (!f.kind || j.kind === f.kind));
    // Newest first; of two created in the same instant, the later inserted (a stable sort keeps
    // insertion order, reversed afterwards).
    return sortedBy(matching, (j) => j.created_at).reverse().slice(0, f.limit).map(copy);
  }

  async queryJobs(q: JobQuery) {
    const matching = [...this.jobs.values()].map((s) => s.job).filter((j) => matchesJobQuery(j, q));
    return matching.sort(compareJobPositions).slice(0, q.limit).map(copy);
  }

  async listStaleJobs(status: 'queued' | 'running', before: string, limit: number) {
    const since = (j: Job) => (status === 'queued' ? j.created_at : (j.started_at ?? j.created_at));
    const stale = [...this.jobs.values()].map((s) => s.job).filter((j) => j.status === status && since(j) < before);
    return sortedBy(stale, since).slice(0, limit).map(copy);
  }

  async countQueuedJobs(workspaceId: string, atMost: number) {
    let queued = 0;
    for (const { job } of this.jobs.values()) {
      if (queued >= atMost) break;
      if (job.workspace_id === workspaceId && job.status === 'queued') queued += 1;
    }
    return queued;
  }

  async claimJob(id: string, startedAt: string, leaseUntil: string) {
    const stored = this.jobs.get(id);
    if (!stored) return null;
    const { job } = stored;
    const leaseRanOut = job.status === 'running' && stored.leaseUntil !== null && stored.leaseUntil < startedAt;
    if ((job.status !== 'queued' || job.held) && !leaseRanOut) return null;
    Object.assign(job, { status: 'running', started_at: startedAt, attempts: job.attempts + 1 });
    stored.leaseUntil = leaseUntil;
    return copy(job);
  }

  async appendJobStream(id: string, chunk: string) {
    const job = this.jobs.get(id)?.job;
    if (job?.status !== 'running') return;
    job.result_stream += chunk;
    job.streaming = true;
  }

  async appendJobLogs(id: string, chunk: string) {
    const job = this.jobs.get(id)?.job;
    if (job?.status === 'running') job.logs += chunk;
  }

  async completeJob(id: string, c: JobCompletion, completedAt: string) {
    const job = this.jobs.get(id)?.job;
    if (!job || !UNFINISHED.has(job.status)) return false;
    Object.assign(job, { status: c.status, success: c.status === 'success', result: copy(c.result ?? null), logs: c.logs, completed_at: completedAt });
    return true;
  }

  async scrubJob(id: string) {
    const job = this.jobs.get(id)?.job;
    if (job) Object.assign(job, { args: null, result: null, logs: '', result_stream: '', deleted: true });
  }

  async countRunJobs(id: string, count: number, limit: number) {
    const made = this.jobsMade.get(id);
    if (count <= 0 ? made === undefined : (made ?? 0) + count > limit) return false;
    this.jobsMade.set(id, (made ?? 0) + count);
    return true;
  }

  async releaseHeldJob(id: string) {
    const job = this.jobs.get(id)?.job;
    if (!job || job.status !== 'queued' || !job.held) return false;
    job.held = false;
    return true;
  }

  async requeueInterrupted() {
    const requeued: string[] = [];
    for (const { job } of this.jobs.values()) {
      if (job.status !== 'running') continue;
      job.status = 'queued';
      requeued.push(job.id);
    }
    return requeued;
  }

  async createUser(u: User, events: OutboxEvent[] = []) {
    if (this.users.has(u.username)) return false;
    this.users.set(u.username, copy(u));
    this.record(events);
    return true;
  }

  async getUser(username: string) {
    return copyOrNull(this.users.get(username));
  }

  async listUsers() {
    return sortedBy([...this.users.values()], (u) => u.username).map(copy);
  }

  async updateUser(u: User) {
    if (!this.users.has(u.username)) return false;
    this.users.set(u.username, copy(u));
    return true;
  }

  async putToken(t: TokenRecord) {
    this.tokens.set(t.token_hash, copy({ ...t, expiry_notice_at: t.expiry_notice_at ?? null }));
  }

  async getToken(tokenHash: string) {
    return copyOrNull(this.tokens.get(tokenHash));
  }

  async listTokens(owner: string) {
    // token_hash breaks ties, as in the other stores.
    const mine = sortedBy([...this.tokens.values()].filter((t) => t.owner === owner), (t) => t.token_hash);
    return sortedBy(mine, (t) => t.created_at).map(copy);
  }

  async deleteToken(tokenHash: string, events: OutboxEvent[] = []) {
    if (this.tokens.delete(tokenHash)) this.record(events);
  }

  async markTokenExpiryNotice(tokenHash: string, at: string, events: OutboxEvent[] = []) {
    const t = this.tokens.get(tokenHash);
    if (!t) return false;
    t.expiry_notice_at = at;
    this.record(events);
    return true;
  }

  async createEntity(e: Entity, events: OutboxEvent[] = [], jobs: Job[] = []) {
    const k = key(e.kind, e.workspace_id, e.key);
    if (this.entities.has(k)) return false;
    // Checked before anything changes: a job that cannot be inserted leaves the entity as it was.
    this.refuseExistingJobs(jobs);
    this.entities.set(k, copy(e));
    this.record(events);
    for (const job of jobs) this.insertJobNow(job);
    return true;
  }

  async replaceEntity(e: Entity, expectedVersion: number, events: OutboxEvent[] = [], jobs: Job[] = []) {
    const k = key(e.kind, e.workspace_id, e.key);
    if (this.entities.get(k)?.version !== expectedVersion) return false;
    this.refuseExistingJobs(jobs);
    this.entities.set(k, copy(e));
    this.record(events);
    for (const job of jobs) this.insertJobNow(job);
    return true;
  }

  private refuseExistingJobs(jobs: Job[]) {
    for (const job of jobs) if (this.jobs.has(job.id)) throw new Error(`job ${job.id} exists`);
  }

  async getEntity(kind: EntityKind, workspaceId: string, entityKey: string) {
    return copyOrNull(this.entities.get(key(kind, workspaceId, entityKey)));
  }

  async getEntityStamp(kind: EntityKind, workspaceId: string, entityKey: string) {
    const e = this.entities.get(key(kind, workspaceId, entityKey));
    return e ? { version: e.version, created_at: e.created_at, updated_at: e.updated_at } : null;
  }

  async listEntities(kind: EntityKind, workspaceId: string) {
    const prefix = key(kind, workspaceId, '');
    const mine = [...this.entities.entries()].filter(([k]) => k.startsWith(prefix)).map(([, e]) => e);
    return sortedBy(mine, (e) => e.key).map(copy);
  }

  async deleteEntity(kind: EntityKind, workspaceId: string, entityKey: string, events: OutboxEvent[] = []) {
    const deleted = this.entities.delete(key(kind, workspaceId, entityKey));
    if (deleted) this.record(events);
    return deleted;
  }

  async insertDeliveries(events: OutboxEvent[]) {
    this.record(events);
  }

  async listPendingDeliveries(limit: number) {
    return sortedBy([...this.deliveries.values()].filter((d) => d.status === 'pending'), (d) => d.id).slice(0, limit).map(copy);
  }

  async getDelivery(scope: string, id: string) {
    return copyOrNull(this.deliveries.get(key(scope, id)));
  }

  async listDeliveries(scope: string, limit: number) {
    return sortedBy([...this.deliveries.values()].filter((d) => d.scope === scope), (d) => d.id).reverse().slice(0, limit).map(copy);
  }

  async replaceDelivery(d: Delivery, expectedVersion: number) {
    const k = key(d.scope, d.id);
    if (this.deliveries.get(k)?.version !== expectedVersion) return false;
    this.deliveries.set(k, copy(d));
    return true;
  }

  private record(events: OutboxEvent[]) {
    for (const e of events) this.deliveries.set(key(e.scope, e.id), newDelivery(copy(e)));
  }
}

/** A job and the end of its worker's lease, which the port keeps out of the Job record. */
interface StoredJob {
  job: Job;
  leaseUntil: string | null;
}

const UNFINISHED: ReadonlySet<string> = new Set(['queued', 'running', 'suspended', 'awaiting_approval']);

/** NUL cannot occur in ids, paths or keys the core accepts, so it separates the parts of a map key. */
function key(...parts: string[]): string {
  return parts.join('\0');
}

/** A deep copy with the semantics of stored JSON: what the other stores give back after a write. */
function copy<T>(value: T): T {
  return value === undefined ? value : JSON.parse(JSON.stringify(value));
}

function copyOrNull<T>(value: T | undefined): T | null {
  return value === undefined ? null : copy(value);
}

/** Ordered by the string `by` gives, as SQLite's default (binary) collation orders text. */
function sortedBy<T>(items: T[], by: (item: T) => string): T[] {
  return [...items].sort((a, b) => {
    const [x, y] = [by(a), by(b)];
    return x < y ? -1 : x > y ? 1 : 0;
  });
}
