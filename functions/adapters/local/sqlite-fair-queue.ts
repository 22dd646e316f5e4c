import type Database from 'better-sqlite3';
import type { Job } from '../../ports.js';
import { turnOrder, type QueueTurns } from './fair-turns.js';
import { toJob, type Row } from './sqlite-rows.js';

/** A workspace's next queued job, as the claim weighs it. */
interface QueueHead {
  queue_rowid: number;
  workspace_id: string;
  priority: number;
  created_at: string;
}

/** The next job of one workspace: higher priority, then oldest (jobs_queued_by_workspace). */
const QUEUED_HEAD_OF = `SELECT rowid AS queue_rowid, workspace_id, priority, created_at FROM jobs
  WHERE status = 'queued' AND held = 0 AND workspace_id = ? ORDER BY priority DESC, created_at, rowid LIMIT 1`;

/**
 * The next job of every workspace that has one queued. The workspaces are found by a walk over the
 * workspace column of jobs_queued_by_workspace (each step a seek to the next workspace), not by reading every queued job.
 */
const QUEUED_HEADS = `WITH RECURSIVE queued(ws) AS (
    SELECT MIN(workspace_id) FROM jobs WHERE status = 'queued' AND held = 0
    UNION ALL
    SELECT (SELECT MIN(workspace_id) FROM jobs WHERE status = 'queued' AND held = 0 AND workspace_id > queued.ws) FROM queued WHERE queued.ws IS NOT NULL
  )
  SELECT j.rowid AS queue_rowid, j.workspace_id, j.priority, j.created_at FROM queued
  JOIN jobs j ON j.rowid = (SELECT rowid FROM jobs WHERE status = 'queued' AND held = 0 AND workspace_id = queued.ws ORDER BY priority DESC, created_at, rowid LIMIT 1)
  WHERE queued.ws IS NOT NULL`;

const CLAIM = `UPDATE jobs SET status = 'running', started_at = @startedAt, lease_until = @leaseUntil, attempts = attempts + 1
  WHERE rowid = @rowid AND status = 'queued' AND held = 0 RETURNING *`;

/**
 * Claims up to `limit` queued jobs, taking turns between workspaces (fair-turns.ts, with what this
 * claim took counted too), the oldest job first among equals; within a workspace, higher priority
 * first, then the oldest by creation, then by insertion. Run inside the caller's transaction;
 * `stmt` gives the store's prepared statements.
 */
export function claimFairly(stmt: (sql: string) => Database.Statement, limit: number, startedAt: string, leaseUntil: string, given: QueueTurns): Job[] {
  const heads = stmt(QUEUED_HEADS).all() as QueueHead[];
  const turns = { running: new Map(given.running), lastServed: new Map(given.lastServed) };
  let served = Math.max(0, ...turns.lastServed.values());
  const claimed: Job[] = [];
  while (claimed.length < limit && heads.length > 0) {
    let best = 0;
    for (let i = 1; i < heads.length; i++) if (before(heads[i], heads[best], turns)) best = i;
    const head = heads[best];
    const row = stmt(CLAIM).get({ rowid: head.queue_rowid, startedAt, leaseUntil }) as Row | undefined;
    if (row) {
      claimed.push(toJob(row));
      turns.running.set(head.workspace_id, (turns.running.get(head.workspace_id) ?? 0) + 1);
      turns.lastServed.set(head.workspace_id, ++served);
    }
    const next = stmt(QUEUED_HEAD_OF).get(head.workspace_id) as QueueHead | undefined;
    if (next) heads[best] = next;
    else heads.splice(best, 1);
  }
  return claimed;
}

function before(a: QueueHead, b: QueueHead, turns: QueueTurns): boolean {
  const turn = turnOrder(a.workspace_id, b.workspace_id, turns);
  if (turn !== 0) return turn < 0;
  if (a.created_at !== b.created_at) return a.created_at < b.created_at;
  return a.queue_rowid < b.queue_rowid;
}
