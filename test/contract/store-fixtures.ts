import { randomUUID } from 'node:crypto';
import type { Entity, EntityKind, Job, ScriptVersion, TokenRecord, User, Workspace } from '../../functions/ports.js';

/**
 * Records for the store contract. A suite shares one store (a real cloud table takes too long to
 * create per test), so every id carries this run's prefix and a counter and no two tests meet.
 */

const run = randomUUID().slice(0, 8);
let seq = 0;

export function uid(prefix: string): string {
  return `${prefix}-${run}-${++seq}`;
}

const EPOCH = Date.UTC(2030, 0, 1);
let tick = 0;

/** A lease that outlasts every test: the claimed job is never taken over. */
export const FAR_FUTURE = new Date(Date.UTC(2100, 0, 1)).toISOString();

/** Strictly increasing timestamps, so "newest first" never depends on a tie-break. */
export function nextTimestamp(): string {
  return new Date(EPOCH + ++tick * 1000).toISOString();
}

export function aWorkspace(overrides: Partial<Workspace> = {}): Workspace {
  return { id: uid('ws'), name: 'A workspace', created_at: nextTimestamp(), object_storage_enabled: false, ...overrides };
}

export function aScriptVersion(workspaceId: string, path: string, overrides: Partial<ScriptVersion> = {}): ScriptVersion {
  return {
    workspace_id: workspaceId,
    path,
    hash: uid('h'),
    parent_hash: null,
    content: 'export function main(b: number, a: string) {\n  return { a, b }; // ünïcødé ✓\n}\n',
    language: 'bun',
    summary: 'adds things',
    description: '',
    // Keys deliberately not in alphabetical order: the order is the parameter order.
    schema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { b: { type: 'number' }, a: { type: 'string', default: '' } },
      required: ['b'],
    },
    delete_after_use: false,
    timeout: null,
    created_by: 'alice',
    created_at: nextTimestamp(),
    ...overrides,
  };
}

export function aJob(workspaceId: string, overrides: Partial<Job> = {}): Job {
  return {
    id: randomUUID(),
    workspace_id: workspaceId,
    kind: 'script',
    parent_job: null,
    script_path: 'f/jobs/run',
    script_hash: uid('h'),
    flow_version: null,
    flow_module: null,
    language: 'python3',
    args: { n: 1, nested: { list: [1, 'two', null, 3.5], empty: '' }, text: 'ünïcødé' },
    status: 'queued',
    created_by: 'alice',
    created_at: nextTimestamp(),
    started_at: null,
    completed_at: null,
    success: null,
    result: null,
    logs: '',
    result_stream: '',
    streaming: false,
    attempts: 0,
    delete_after_use: false,
    deleted: false,
    ...overrides,
  };
}

export function aUser(overrides: Partial<User> = {}): User {
  return {
    username: uid('user'),
    email: 'someone@example.com',
    is_admin: false,
    password_hash: 'scrypt$16384$8$1$c2FsdA==$aGFzaA==',
    created_at: nextTimestamp(),
    ...overrides,
  };
}

export function aToken(overrides: Partial<TokenRecord> = {}): TokenRecord {
  return {
    token_hash: uid('tokenhash'),
    prefix: 'svc_abcdef',
    label: 'ci',
    owner: 'alice',
    kind: 'api',
    workspace_id: null,
    scopes: null,
    expires_at: null,
    created_at: nextTimestamp(),
    expiry_notice_at: null,
    ...overrides,
  };
}

export function anEntity(kind: EntityKind, workspaceId: string, key: string, overrides: Partial<Entity> = {}): Entity {
  const at = nextTimestamp();
  return {
    kind,
    workspace_id: workspaceId,
    key,
    value: { path: key, description: 'ünïcødé ✓', tags: ['a', 'b'], nested: { n: 1, on: true, none: null } },
    version: 1,
    created_at: at,
    updated_at: at,
    ...overrides,
  };
}

/**
 * Listings may be served from an eventually consistent index (DynamoDB GSIs): retry a read until
 * it satisfies `ok` or a few seconds pass, then let the caller's assertions report what it saw.
 */
export async function eventually<T>(read: () => Promise<T>, ok: (value: T) => boolean, ms = 5_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (ok(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
}
