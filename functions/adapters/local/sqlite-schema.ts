import { DROP_INSERT_TRIGGER, jobFieldsMigration } from './sqlite-job-fields.js';

/** The local store's tables. Versioned by `user_version` so later issues can migrate forward. */
export const MIGRATIONS: string[] = [
  `
  CREATE TABLE workspaces (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    created_at TEXT NOT NULL,
    object_storage_enabled INTEGER NOT NULL DEFAULT 0
  );
  CREATE TABLE users (
    username TEXT PRIMARY KEY,
    email TEXT NOT NULL,
    is_admin INTEGER NOT NULL,
    created_at TEXT NOT NULL
  );
  CREATE TABLE script_versions (
    workspace_id TEXT NOT NULL REFERENCES workspaces(id),
    hash TEXT NOT NULL,
    path TEXT NOT NULL,
    parent_hash TEXT,
    content TEXT NOT NULL,
    language TEXT NOT NULL,
    summary TEXT NOT NULL,
    description TEXT NOT NULL,
    schema TEXT NOT NULL,
    delete_after_use INTEGER NOT NULL,
    timeout INTEGER,
    created_by TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (workspace_id, hash)
  );
  CREATE INDEX script_versions_by_path ON script_versions(workspace_id, path);
  -- The latest version of each path: the row a /p/ URL runs.
  CREATE TABLE script_heads (
    workspace_id TEXT NOT NULL,
    path TEXT NOT NULL,
    hash TEXT NOT NULL,
    PRIMARY KEY (workspace_id, path)
  );
  CREATE TABLE jobs (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    script_path TEXT NOT NULL,
    script_hash TEXT NOT NULL,
    language TEXT NOT NULL,
    args TEXT,
    status TEXT NOT NULL,
    created_by TEXT NOT NULL,
    created_at TEXT NOT NULL,
    started_at TEXT,
    completed_at TEXT,
    success INTEGER,
    result TEXT,
    logs TEXT NOT NULL DEFAULT '',
    result_stream TEXT NOT NULL DEFAULT '',
    streaming INTEGER NOT NULL DEFAULT 0,
    attempts INTEGER NOT NULL DEFAULT 0,
    delete_after_use INTEGER NOT NULL DEFAULT 0,
    deleted INTEGER NOT NULL DEFAULT 0
  );
  CREATE INDEX jobs_queue ON jobs(status);
  CREATE INDEX jobs_by_workspace ON jobs(workspace_id, created_at);
  CREATE TABLE tokens (
    token_hash TEXT PRIMARY KEY,
    prefix TEXT NOT NULL,
    label TEXT NOT NULL,
    owner TEXT NOT NULL,
    workspace_id TEXT,
    expires_at TEXT,
    created_at TEXT NOT NULL
  );
  `,
  // The worker's lease on a running job: past it, the job may be claimed again.
  `ALTER TABLE jobs ADD COLUMN lease_until TEXT;`,
  // Password logins, sessions and scoped tokens; workspace documents (members, groups, folders,
  // resources, resource types, variables) as versioned JSON.
  `
  ALTER TABLE users ADD COLUMN password_hash TEXT;
  ALTER TABLE tokens ADD COLUMN kind TEXT NOT NULL DEFAULT 'api';
  -- A JSON array of scope strings; NULL means the owner's full permissions.
  ALTER TABLE tokens ADD COLUMN scopes TEXT;
  -- listTokens reads one owner's tokens in creation order.
  CREATE INDEX tokens_by_owner ON tokens(owner, created_at);
  -- No foreign key to workspaces: the DynamoDB store cannot enforce one, and both shells must
  -- accept the same writes.
  CREATE TABLE entities (
    kind TEXT NOT NULL,
    workspace_id TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    version INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (kind, workspace_id, key)
  ) WITHOUT ROWID;
  `,
  // Flow steps and sub-flows point at the flow job that runs them.
  `ALTER TABLE jobs ADD COLUMN parent_job TEXT;`,
  // What a CLI push records on a script version: its deployment message and lock.
  `
  ALTER TABLE script_versions ADD COLUMN deployment_message TEXT;
  ALTER TABLE script_versions ADD COLUMN lock TEXT;
  `,
  // When a token's owner was told it expires soon (spec 5.8).
  `ALTER TABLE tokens ADD COLUMN expiry_notice_at TEXT;`,
  `
  -- typed: a job records what it runs in its own fields: script_hash for a script, flow_version
  -- (and flow_module for an inline step) for a flow, instead of packing the flow version into
  -- script_hash. script_hash becomes nullable, which in SQLite means rebuilding the table; rowids
  -- are kept because the queue and listings order by them.
  CREATE TABLE jobs_typed (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    script_path TEXT NOT NULL,
    script_hash TEXT,
    flow_version INTEGER,
    flow_module TEXT,
    language TEXT NOT NULL,
    args TEXT,
    status TEXT NOT NULL,
    created_by TEXT NOT NULL,
    created_at TEXT NOT NULL,
    started_at TEXT,
    completed_at TEXT,
    success INTEGER,
    result TEXT,
    logs TEXT NOT NULL DEFAULT '',
    result_stream TEXT NOT NULL DEFAULT '',
    streaming INTEGER NOT NULL DEFAULT 0,
    attempts INTEGER NOT NULL DEFAULT 0,
    delete_after_use INTEGER NOT NULL DEFAULT 0,
    deleted INTEGER NOT NULL DEFAULT 0,
    lease_until TEXT,
    parent_job TEXT
  );
  INSERT INTO jobs_typed (rowid, id, workspace_id, kind, script_path, script_hash, flow_version, flow_module, language, args, status,
    created_by, created_at, started_at, completed_at, success, result, logs, result_stream, streaming, attempts, delete_after_use,
    deleted, lease_until, parent_job)
  SELECT rowid, id, workspace_id, kind, script_path,
    CASE WHEN kind = 'script' THEN script_hash END,
    CASE kind WHEN 'flow' THEN CAST(script_hash AS INTEGER)
              WHEN 'flowstep' THEN CAST(substr(script_hash, 1, instr(script_hash, ':') - 1) AS INTEGER) END,
    CASE WHEN kind = 'flowstep' THEN substr(script_hash, instr(script_hash, ':') + 1) END,
    language, args, status, created_by, created_at, started_at, completed_at, success, result, logs, result_stream, streaming,
    attempts, delete_after_use, deleted, lease_until, parent_job
  FROM jobs;
  DROP TABLE jobs;
  ALTER TABLE jobs_typed RENAME TO jobs;
  CREATE INDEX jobs_queue ON jobs(status);
  CREATE INDEX jobs_by_workspace ON jobs(workspace_id, created_at);
  `,
  // Every token stored so far kept its first 12 characters in clear, 8 of them secret; 8 are
  // enough to tell tokens apart. Each is moved under its keyed digest when next used (core/identity/auth.ts).
  `
  -- httpsurf: stored tokens keep no more than 4 characters of their secret in clear
  UPDATE tokens SET prefix = substr(prefix, 1, 8);
  `,
  `-- confine: the scopes of the token that started a job (a JSON array; NULL: full rights).
  ALTER TABLE jobs ADD COLUMN created_scopes TEXT;`,
  `-- webhooks: the outbox of webhook events, written in the transaction of the change it announces.
  -- id sorts by creation; the partial index keeps the dispatcher's query to what is still pending.
  CREATE TABLE deliveries (
    scope TEXT NOT NULL,
    id TEXT NOT NULL,
    status TEXT NOT NULL,
    record TEXT NOT NULL,
    version INTEGER NOT NULL,
    PRIMARY KEY (scope, id)
  );
  CREATE INDEX deliveries_pending ON deliveries(id) WHERE status = 'pending';`,
  `-- sched: the schedule that started a job (its path; NULL: none), listed newest first by schedule.
  ALTER TABLE jobs ADD COLUMN schedule_path TEXT;
  CREATE INDEX jobs_by_schedule ON jobs(workspace_id, schedule_path, created_at) WHERE schedule_path IS NOT NULL;`,
  `-- console: the run list (Store.queryJobs) reads newest first by (created_at, id) within a
  -- workspace, narrowed by status, user or path: one index per filter, each ending in the order so
  -- a page is read in order and stops at its limit. jobs_list supersedes jobs_by_workspace.
  CREATE INDEX jobs_list ON jobs(workspace_id, created_at, id);
  CREATE INDEX jobs_list_status ON jobs(workspace_id, status, created_at, id);
  CREATE INDEX jobs_list_user ON jobs(workspace_id, created_by, created_at, id);
  CREATE INDEX jobs_list_path ON jobs(workspace_id, script_path, created_at, id);
  DROP INDEX jobs_by_workspace;`,
  `-- console2: what started a job (webhook, route, schedule, cli, console, rerun, flow, api; NULL on
  -- jobs stored before it was recorded), a run list filter. The column is not named trigger, a
  -- keyword in SQL. Filtered on the rows the other indexes read, like kind.
  ALTER TABLE jobs ADD COLUMN trigger_kind TEXT;`,
  // argsidx: built from the bounds in sqlite-job-fields.ts (never edit once shipped; add a migration).
  jobFieldsMigration(),
  `-- fifo: the local pool takes queued jobs oldest first by creation, not by insertion: a sync
  -- caller that waited for a busy worker (worker-pool.ts) is stored after younger jobs yet keeps its turn.
  CREATE INDEX jobs_queue_by_age ON jobs(status, created_at);
  DROP INDEX jobs_queue;`,
  `-- limits: a script's result cache, concurrency limit and priority (core/jobs/run-settings.ts) as one
  -- JSON document; a job's priority (the pool takes higher first), concurrency key, whether it is
  -- held back for a concurrency slot (never taken while held) and whether the cache answered it.
  ALTER TABLE script_versions ADD COLUMN run_settings TEXT;
  ALTER TABLE jobs ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE jobs ADD COLUMN concurrency_key TEXT;
  ALTER TABLE jobs ADD COLUMN held INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE jobs ADD COLUMN cache_hit INTEGER NOT NULL DEFAULT 0;
  CREATE INDEX jobs_queue_by_priority ON jobs(status, held, priority DESC, created_at);`,
  DROP_INSERT_TRIGGER,
  `-- activequeue: the queue indexes hold only the jobs they serve (queued, and running for the
  -- stale-lease and restart scans), not every finished job: a run's insert and completion then
  -- touch a page or two of a small index instead of moving an entry across a tree of every job
  -- ever run. A query uses them only with the status written as a literal (listStaleJobs).
  DROP INDEX jobs_queue_by_age;
  DROP INDEX jobs_queue_by_priority;
  CREATE INDEX jobs_active_by_age ON jobs(status, created_at) WHERE status = 'queued' OR status = 'running';
  CREATE INDEX jobs_queued_by_priority ON jobs(held, priority DESC, created_at) WHERE status = 'queued';`,
  `-- rowidentities: entities become a rowid table keyed by a unique index. A WITHOUT ROWID table is
  -- an index b-tree, which keeps at most ~1,000 bytes of a row in its page: a flow run of ten steps
  -- or a flow version of a few modules went to overflow pages, and SQLite reads overflow pages with
  -- a system call each, past its page cache, on every read, and writes a fresh chain on every
  -- update. A rowid table keeps rows up to ~4,000 bytes in the page.
  CREATE TABLE entities_by_rowid (
    kind TEXT NOT NULL,
    workspace_id TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    version INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (kind, workspace_id, key)
  );
  INSERT INTO entities_by_rowid (kind, workspace_id, key, value, version, created_at, updated_at)
    SELECT kind, workspace_id, key, value, version, created_at, updated_at FROM entities ORDER BY kind, workspace_id, key;
  DROP TABLE entities;
  ALTER TABLE entities_by_rowid RENAME TO entities;`,
  `-- fairqueue: the pool takes the next queued job from the workspace with the fewest jobs running
  -- (SqliteStore.claimQueued): each workspace's oldest queued job is found in this index, and the
  -- workspaces that have one by a walk over its workspace column. It replaces the index of one
  -- queue order for all workspaces.
  DROP INDEX jobs_queued_by_priority;
  CREATE INDEX jobs_queued_by_workspace ON jobs(held, workspace_id, priority DESC, created_at) WHERE status = 'queued';`,
  `-- lineage: a run a job started with its job token records that job and its depth (core/jobs/run-admission.ts).
  ALTER TABLE jobs ADD COLUMN started_by_job TEXT;
  ALTER TABLE jobs ADD COLUMN run_depth INTEGER;`,
  `-- memberindex: the workspaces a user belongs to, or is invited to (SqliteStore.listMemberWorkspaces,
  -- listInvitesOf), are a seek in these indexes of member and invite entities by username, kept by
  -- every write of them, rather than a read in every workspace. Built over the entities stored so
  -- far as they are created. One per kind: a partial index serves a query whose WHERE names its kind.
  CREATE INDEX members_by_user ON entities(key, workspace_id) WHERE kind = 'member';
  CREATE INDEX invites_by_user ON entities(key, workspace_id) WHERE kind = 'invite';`,
  `-- runjobs: the jobs a top-level run made in all, by its job's id (core/jobs/run-budget.ts): a small
  -- row of its own, as a count on the job's row would rewrite its arguments at every flow step.
  CREATE TABLE run_jobs (id TEXT PRIMARY KEY, jobs_made INTEGER NOT NULL) WITHOUT ROWID;`,
];
