import Database from 'better-sqlite3';
import { MIGRATIONS } from './sqlite-schema.js';
import { GroupCommit } from './sqlite-group-commit.js';
import { insertJobFields } from './sqlite-job-fields.js';
import { jobQuerySql, planJobQuery, registerJobQueryFunctions } from './sqlite-job-query.js';
import { parseStored } from '../../core/documents/parse.js';
import { deliveryRecord, entityStamp, jobRecord, jobStatus, newDelivery, scriptVersionRecord, tokenRecord, workspaceRecord } from '../../core/documents/records.js';
import { storedRunSettings } from '../../core/jobs/run-settings.js';
import type { QueueTurns } from './fair-turns.js';
import { claimFairly } from './sqlite-fair-queue.js';
import { entityRow, INSERT_JOB, jobInsertValues, toDelivery, toEntity, toJob, toScript, toToken, toUser, toWorkspace, userRow, type Row } from './sqlite-rows.js';
import type { Delivery, Entity, EntityKind, Job, JobCompletion, JobListFilter, JobQuery, OutboxEvent, ScriptVersion, Store, TokenRecord, User, Workspace } from '../../ports.js';

/**
 * The local shell's state in one SQLite file (WAL). better-sqlite3 is synchronous: reads answer at
 * once, and every write is queued for the group commit of the current event-loop round
 * (sqlite-group-commit.ts), resolving only once that round's transaction has committed.
 *
 * Every multi-statement transaction begins IMMEDIATE, taking the write lock first. A deferred one
 * that reads before it writes gets SQLITE_BUSY at once, without waiting out busy_timeout, when
 * another connection holds the write lock at that moment (the checkpoint thread's RESTART does, for
 * a few milliseconds): a script create failed with "database is locked" so, under load.
 */
export class SqliteStore implements Store {
  readonly db: Database.Database;

  private readonly commits: GroupCommit;

  constructor(file: string) {
    this.db = new Database(file);
    this.commits = new GroupCommit(this.db);
    this.db.pragma('journal_mode = WAL');
    // NORMAL in WAL mode survives a process crash (kill -9); only an OS crash may lose the last commits.
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('foreign_keys = ON');
    this.db.pragma('busy_timeout = 5000');
    this.migrate();
    registerJobQueryFunctions(this.db);
  }

  private migrate() {
    const current = this.db.pragma('user_version', { simple: true }) as number;
    for (let v = current; v < MIGRATIONS.length; v++) {
      this.db.transaction(() => {
        this.db.exec(MIGRATIONS[v]);
        this.db.pragma(`user_version = ${v + 1}`);
      }).immediate();
    }
  }

  close() {
    this.commits.commit();
    this.db.close();
  }

  async createWorkspace(record: Workspace) {
    return this.write(() => {
      const ws = parseStored(workspaceRecord, record, `workspace ${record.id}`);
      const r = this.db
        .prepare('INSERT OR IGNORE INTO workspaces (id, name, created_at, object_storage_enabled) VALUES (?, ?, ?, ?)')
        .run(ws.id, ws.name, ws.created_at, ws.object_storage_enabled ? 1 : 0);
      return r.changes === 1 ? ('created' as const) : ('exists' as const);
    });
  }

  async getWorkspace(id: string) {
    const row = this.stmt('SELECT * FROM workspaces WHERE id = ?').get(id) as Row | undefined;
    return row ? toWorkspace(row) : null;
  }

  async listWorkspaces() {
    return (this.stmt('SELECT * FROM workspaces ORDER BY id').all() as Row[]).map(toWorkspace);
  }

  async listMemberWorkspaces(username: string) {
    // The partial index members_by_user (sqlite-schema.ts) is read by the literal kind.
    const rows = this.stmt(
      `SELECT w.* FROM entities e JOIN workspaces w ON w.id = e.workspace_id
       WHERE e.kind = 'member' AND e.key = ? ORDER BY e.workspace_id`,
    ).all(username) as Row[];
    return rows.map(toWorkspace);
  }

  async listInvitesOf(username: string) {
    // The partial index invites_by_user (sqlite-schema.ts), as for members.
    return (this.stmt(`SELECT * FROM entities WHERE kind = 'invite' AND key = ? ORDER BY workspace_id`).all(username) as Row[]).map(toEntity);
  }

  async setObjectStorage(id: string, enabled: boolean) {
    return this.write(() => {
      this.stmt('UPDATE workspaces SET object_storage_enabled = ? WHERE id = ?').run(enabled ? 1 : 0, id);
    });
  }

  async insertScriptVersion(version: ScriptVersion, expectedLatest: string | null, events: OutboxEvent[] = []) {
    return this.write(() => {
      const v = parseStored(scriptVersionRecord, version, `script version ${version.hash}`);
      return this.db.transaction(() => {
        const head = this.stmt('SELECT hash FROM script_heads WHERE workspace_id = ? AND path = ?').get(v.workspace_id, v.path) as { hash: string } | undefined;
        if ((head?.hash ?? null) !== expectedLatest) return false;
        this.stmt(
          `INSERT INTO script_versions (workspace_id, hash, path, parent_hash, content, language, summary, description, schema, delete_after_use, timeout, created_by, created_at, deployment_message, lock, run_settings)
           VALUES (@workspace_id, @hash, @path, @parent_hash, @content, @language, @summary, @description, @schema, @delete_after_use, @timeout, @created_by, @created_at, @deployment_message, @lock, @run_settings)`,
        ).run({
          workspace_id: v.workspace_id, hash: v.hash, path: v.path, parent_hash: v.parent_hash, content: v.content, language: v.language, summary: v.summary, description: v.description,
          timeout: v.timeout, created_by: v.created_by, created_at: v.created_at,
          schema: JSON.stringify(v.schema), delete_after_use: v.delete_after_use ? 1 : 0, deployment_message: v.deployment_message ?? null, lock: v.lock ?? null, run_settings: storedRunSettings(v),
        });
        this.stmt('INSERT OR REPLACE INTO script_heads (workspace_id, path, hash) VALUES (?, ?, ?)').run(v.workspace_id, v.path, v.hash);
        this.record(events);
        return true;
      }).immediate();
    });
  }

  async getLatestScript(workspaceId: string, path: string) {
    const row = this.stmt(
      `SELECT v.* FROM script_heads h JOIN script_versions v ON v.workspace_id = h.workspace_id AND v.hash = h.hash
       WHERE h.workspace_id = ? AND h.path = ?`,
    ).get(workspaceId, path) as Row | undefined;
    return row ? toScript(row) : null;
  }

  async getScriptByHash(workspaceId: string, hash: string) {
    const row = this.stmt('SELECT * FROM script_versions WHERE workspace_id = ? AND hash = ?').get(workspaceId, hash) as Row | undefined;
    return row ? toScript(row) : null;
  }

  async listLatestScripts(workspaceId: string) {
    const rows = this.stmt(
      `SELECT v.* FROM script_heads h JOIN script_versions v ON v.workspace_id = h.workspace_id AND v.hash = h.hash
       WHERE h.workspace_id = ? ORDER BY h.path`,
    ).all(workspaceId) as Row[];
    return rows.map(toScript);
  }

  async deleteScriptPath(workspaceId: string, path: string, events: OutboxEvent[] = []) {
    return this.write(() => {
      return this.db.transaction(() => {
        this.stmt('DELETE FROM script_heads WHERE workspace_id = ? AND path = ?').run(workspaceId, path);
        const removed = this.stmt('DELETE FROM script_versions WHERE workspace_id = ? AND path = ?').run(workspaceId, path).changes;
        if (removed > 0) this.record(events);
        return removed;
      }).immediate();
    });
  }

  async insertJob(record: Job) {
    return this.write(() => this.insertJobRow(record));
  }

  /** Inside the caller's write. */
  private insertJobRow(record: Job) {
    const job = parseStored(jobRecord, record, `job ${record.id}`);
    this.stmt(INSERT_JOB).run(...jobInsertValues(job));
    insertJobFields(this.db, job, 'args', job.args);
  }

  async getJob(workspaceId: string, id: string) {
    const row = this.stmt('SELECT * FROM jobs WHERE id = ? AND workspace_id = ?').get(id, workspaceId) as Row | undefined;
    return row ? toJob(row) : null;
  }

  async findJobById(id: string) {
    const row = this.stmt('SELECT * FROM jobs WHERE id = ?').get(id) as Row | undefined;
    return row ? toJob(row) : null;
  }

  async getJobStatus(workspaceId: string, id: string) {
    const row = this.stmt('SELECT status FROM jobs WHERE id = ? AND workspace_id = ?').get(id, workspaceId) as { status: string } | undefined;
    return row ? parseStored(jobStatus, row.status, `job ${id}`) : null;
  }

  async listJobs(f: JobListFilter) {
    const where = ['workspace_id = @workspace_id'];
    if (f.status) where.push('status = @status');
    if (f.script_path) where.push('script_path = @script_path');
    if (f.schedule_path) where.push('schedule_path = @schedule_path');
    if (f.kind) where.push('kind = @kind');
    const rows = this.db
      .prepare(`SELECT * FROM jobs WHERE ${where.join(' AND ')} ORDER BY created_at DESC, rowid DESC LIMIT @limit`)
      .all({ status: null, script_path: null, schedule_path: null, kind: null, ...f }) as Row[];
    return rows.map(toJob);
  }

  async queryJobs(q: JobQuery) {
    const { sql, params } = jobQuerySql(q, planJobQuery(this.db, q));
    return (this.stmt(sql).all(params) as Row[]).map(toJob);
  }

  async listStaleJobs(status: 'queued' | 'running', before: string, limit: number) {
    const since = status === 'queued' ? 'created_at' : 'COALESCE(started_at, created_at)';
    // The status as a literal: only then may SQLite read the partial index of active jobs.
    const literal = status === 'queued' ? "'queued'" : "'running'";
    const rows = this.stmt(`SELECT * FROM jobs WHERE status = ${literal} AND ${since} < ? ORDER BY ${since}, rowid LIMIT ?`).all(before, limit) as Row[];
    return rows.map(toJob);
  }

  async countQueuedJobs(workspaceId: string, atMost: number) {
    // jobs_queued_by_workspace (held, workspace_id, ...) WHERE status = 'queued': the status as a
    // literal and both values of held, so SQLite reads the workspace's two runs of that partial
    // index, and no more than `atMost` entries of them.
    const row = this.stmt(
      `SELECT count(*) AS n FROM (SELECT 1 FROM jobs INDEXED BY jobs_queued_by_workspace WHERE status = 'queued' AND held IN (0, 1) AND workspace_id = ? LIMIT ?)`,
    ).get(workspaceId, atMost) as { n: number };
    return row.n;
  }

  async claimJob(id: string, startedAt: string, leaseUntil: string) {
    return this.write(() => {
      const row = this.stmt(
        `UPDATE jobs SET status = 'running', started_at = @startedAt, lease_until = @leaseUntil, attempts = attempts + 1
         WHERE id = @id AND ((status = 'queued' AND held = 0) OR (status = 'running' AND lease_until < @startedAt)) RETURNING *`,
      ).get({ id, startedAt, leaseUntil }) as Row | undefined;
      return row ? toJob(row) : null;
    });
  }

  /**
   * Claims (as claimJob does) up to `limit` queued jobs for the local worker pool, in one
   * transaction, taking turns between workspaces (sqlite-fair-queue.ts): a workspace with thousands
   * of jobs queued delays another's next job by about one job per worker, not by its whole backlog,
   * and a script's priority orders its own workspace's jobs only.
   */
  claimQueued(limit: number, startedAt: string, leaseUntil: string, turns: QueueTurns = { running: new Map(), lastServed: new Map() }): Job[] {
    // Outside the group commit, so IMMEDIATE itself (see the class comment): the claim reads first.
    return this.db.transaction(() => claimFairly((sql) => this.stmt(sql), limit, startedAt, leaseUntil, turns)).immediate();
  }

  async appendJobStream(id: string, chunk: string) {
    return this.write(() => {
      this.stmt(`UPDATE jobs SET result_stream = result_stream || ?, streaming = 1 WHERE id = ? AND status = 'running'`).run(chunk, id);
    });
  }

  async appendJobLogs(id: string, chunk: string) {
    return this.write(() => {
      this.stmt(`UPDATE jobs SET logs = logs || ? WHERE id = ? AND status = 'running'`).run(chunk, id);
    });
  }

  async completeJob(id: string, c: JobCompletion, completedAt: string) {
    return this.write(() => {
      const r = this.stmt(
        `UPDATE jobs SET status = ?, success = ?, result = ?, logs = ?, completed_at = ?
         WHERE id = ? AND status IN ('queued', 'running', 'suspended', 'awaiting_approval')`,
      ).run(c.status, c.status === 'success' ? 1 : 0, JSON.stringify(c.result ?? null), c.logs, completedAt, id);
      return r.changes === 1;
    });
  }

  async scrubJob(id: string) {
    return this.write(() => {
      this.stmt(`UPDATE jobs SET args = NULL, result = NULL, logs = '', result_stream = '', deleted = 1 WHERE id = ?`).run(id);
    });
  }

  async countRunJobs(id: string, count: number, limit: number) {
    if (count > limit) return false;
    return this.write(() => {
      if (count <= 0) return this.stmt('UPDATE run_jobs SET jobs_made = jobs_made + ? WHERE id = ?').run(count, id).changes === 1;
      // One statement: inserted at `count`, or added to unless that passes the limit (no change then).
      const upsert = 'INSERT INTO run_jobs (id, jobs_made) VALUES (@id, @count) ON CONFLICT (id) DO UPDATE SET jobs_made = jobs_made + @count WHERE jobs_made + @count <= @limit';
      return this.stmt(upsert).run({ id, count, limit }).changes === 1;
    });
  }

  async releaseHeldJob(id: string) {
    return this.write(() => {
      return this.stmt(`UPDATE jobs SET held = 0 WHERE id = ? AND held = 1 AND status = 'queued'`).run(id).changes === 1;
    });
  }

  async requeueInterrupted() {
    return this.write(() => {
      const rows = this.stmt(`UPDATE jobs SET status = 'queued' WHERE status = 'running' RETURNING id`).all() as { id: string }[];
      return rows.map((r) => r.id);
    });
  }

  async createUser(u: User, events: OutboxEvent[] = []) {
    return this.write(() => {
      return this.withEvents(events, () =>
        this.stmt(
          `INSERT OR IGNORE INTO users (username, email, is_admin, password_hash, created_at)
           VALUES (@username, @email, @is_admin, @password_hash, @created_at)`,
        ).run(userRow(u)).changes === 1,
      );
    });
  }

  async getUser(username: string) {
    const row = this.stmt('SELECT * FROM users WHERE username = ?').get(username) as Row | undefined;
    return row ? toUser(row) : null;
  }

  async listUsers() {
    return (this.stmt('SELECT * FROM users ORDER BY username').all() as Row[]).map(toUser);
  }

  async updateUser(u: User) {
    return this.write(() => {
      return this.stmt(
        'UPDATE users SET email = @email, is_admin = @is_admin, password_hash = @password_hash, created_at = @created_at WHERE username = @username',
      ).run(userRow(u)).changes === 1;
    });
  }

  async putToken(record: TokenRecord) {
    return this.write(() => {
      const t = parseStored(tokenRecord, record, `token ${record.prefix}`);
      this.stmt(
        `INSERT OR REPLACE INTO tokens (token_hash, prefix, label, owner, kind, workspace_id, scopes, expires_at, created_at, expiry_notice_at)
         VALUES (@token_hash, @prefix, @label, @owner, @kind, @workspace_id, @scopes, @expires_at, @created_at, @expiry_notice_at)`,
      ).run({ ...t, scopes: t.scopes === null ? null : JSON.stringify(t.scopes), expiry_notice_at: t.expiry_notice_at ?? null });
    });
  }

  async getToken(tokenHash: string) {
    const row = this.stmt('SELECT * FROM tokens WHERE token_hash = ?').get(tokenHash) as Row | undefined;
    return row ? toToken(row) : null;
  }

  async listTokens(owner: string) {
    // token_hash breaks ties so both shells list tokens created in the same instant alike.
    return (this.stmt('SELECT * FROM tokens WHERE owner = ? ORDER BY created_at, token_hash').all(owner) as Row[]).map(toToken);
  }

  async deleteToken(tokenHash: string, events: OutboxEvent[] = []) {
    return this.write(() => {
      this.withEvents(events, () => this.stmt('DELETE FROM tokens WHERE token_hash = ?').run(tokenHash).changes === 1);
    });
  }

  async markTokenExpiryNotice(tokenHash: string, at: string, events: OutboxEvent[] = []) {
    return this.write(() => {
      return this.withEvents(events, () => this.stmt('UPDATE tokens SET expiry_notice_at = ? WHERE token_hash = ?').run(at, tokenHash).changes === 1);
    });
  }

  async createEntity(e: Entity, events: OutboxEvent[] = [], jobs: Job[] = []) {
    return this.write(() => {
      return this.withEvents(events, () =>
        this.withJobs(
          jobs,
          this.stmt(
            `INSERT OR IGNORE INTO entities (kind, workspace_id, key, value, version, created_at, updated_at)
             VALUES (@kind, @workspace_id, @key, @value, @version, @created_at, @updated_at)`,
          ).run(entityRow(e)).changes === 1,
        ),
      );
    });
  }

  async replaceEntity(e: Entity, expectedVersion: number, events: OutboxEvent[] = [], jobs: Job[] = []) {
    return this.write(() => {
      // The version check and the write are one statement: of two replaces that read the same
      // version, the second finds the version moved on and changes nothing.
      return this.withEvents(events, () =>
        this.withJobs(
          jobs,
          this.stmt(
            `UPDATE entities SET value = @value, version = @version, created_at = @created_at, updated_at = @updated_at
             WHERE kind = @kind AND workspace_id = @workspace_id AND key = @key AND version = @expected`,
          ).run({ ...entityRow(e), expected: expectedVersion }).changes === 1,
        ),
      );
    });
  }

  /**
   * Inserts `jobs` when the write before them `changed` something. Inside that write's closure, which
   * the group commit runs as one unit: a job that fails to insert undoes the write with it.
   */
  private withJobs(jobs: Job[], changed: boolean): boolean {
    if (changed) for (const job of jobs) this.insertJobRow(job);
    return changed;
  }

  async getEntity(kind: EntityKind, workspaceId: string, key: string) {
    const row = this.stmt('SELECT * FROM entities WHERE kind = ? AND workspace_id = ? AND key = ?').get(kind, workspaceId, key) as Row | undefined;
    return row ? toEntity(row) : null;
  }

  async getEntityStamp(kind: EntityKind, workspaceId: string, key: string) {
    const row = this.stmt('SELECT version, created_at, updated_at FROM entities WHERE kind = ? AND workspace_id = ? AND key = ?').get(kind, workspaceId, key);
    return row ? parseStored(entityStamp, row, `${kind} ${key}`) : null;
  }

  async listEntities(kind: EntityKind, workspaceId: string) {
    return (this.stmt('SELECT * FROM entities WHERE kind = ? AND workspace_id = ? ORDER BY key').all(kind, workspaceId) as Row[]).map(toEntity);
  }

  async deleteEntity(kind: EntityKind, workspaceId: string, key: string, events: OutboxEvent[] = []) {
    return this.write(() => {
      return this.withEvents(events, () => this.stmt('DELETE FROM entities WHERE kind = ? AND workspace_id = ? AND key = ?').run(kind, workspaceId, key).changes === 1);
    });
  }

  async insertDeliveries(events: OutboxEvent[]) {
    return this.write(() => {
      this.db.transaction(() => this.record(events)).immediate();
    });
  }

  async listPendingDeliveries(limit: number) {
    return (this.stmt("SELECT record FROM deliveries WHERE status = 'pending' ORDER BY id LIMIT ?").all(limit) as Row[]).map(toDelivery);
  }

  async getDelivery(scope: string, id: string) {
    const row = this.stmt('SELECT record FROM deliveries WHERE scope = ? AND id = ?').get(scope, id) as Row | undefined;
    return row ? toDelivery(row) : null;
  }

  async listDeliveries(scope: string, limit: number) {
    return (this.stmt('SELECT record FROM deliveries WHERE scope = ? ORDER BY id DESC LIMIT ?').all(scope, limit) as Row[]).map(toDelivery);
  }

  async replaceDelivery(record: Delivery, expectedVersion: number) {
    return this.write(() => {
      const d = parseStored(deliveryRecord, record, `delivery ${record.id}`);
      return this.stmt('UPDATE deliveries SET status = ?, record = ?, version = ? WHERE scope = ? AND id = ? AND version = ?').run(d.status, JSON.stringify(d), d.version, d.scope, d.id, expectedVersion).changes === 1;
    });
  }

  /** Runs `change` and, when it changed something, records its events, all in one transaction. */
  private withEvents(events: OutboxEvent[], change: () => boolean): boolean {
    if (events.length === 0) return change();
    return this.db.transaction(() => {
      const changed = change();
      if (changed) this.record(events);
      return changed;
    }).immediate();
  }

  /** Inside the caller's transaction. */
  private record(events: OutboxEvent[]) {
    for (const e of events) {
      const d = parseStored(deliveryRecord, newDelivery(e), `event ${e.id}`);
      this.stmt('INSERT INTO deliveries (scope, id, status, record, version) VALUES (?, ?, ?, ?, ?)').run(d.scope, d.id, d.status, JSON.stringify(d), d.version);
    }
  }

  /** Every write: run in this round's group commit, resolved once committed. */
  private write<T>(work: () => T): Promise<T> {
    return this.commits.write(work);
  }

  // Prepared statements are cached: the webhook hot path runs the same few queries.
  private readonly statements = new Map<string, Database.Statement>();
  private stmt(sql: string): Database.Statement {
    let s = this.statements.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.statements.set(sql, s);
    }
    return s;
  }
}
