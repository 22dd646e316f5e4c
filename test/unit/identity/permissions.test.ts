import { describe, expect, it } from 'vitest';
import { Rights, type Folder, type Group, type Member } from '../../../functions/core/identity/permissions.js';
import { parseScopes } from '../../../functions/core/identity/scopes.js';
import type { Principal } from '../../../functions/core/identity/auth.js';
import type { Entity, EntityKind, Job, Store } from '../../../functions/ports.js';

/** The entities Rights reads, in memory. */
function storeWith(entities: { kind: EntityKind; key: string; value: object }[]): Pick<Store, 'getEntity' | 'listEntities'> {
  const all = entities.map((e) => ({ ...e, workspace_id: 'ws', version: 1, created_at: '', updated_at: '' }) as Entity);
  return {
    getEntity: async (kind, ws, key) => all.find((e) => e.kind === kind && e.workspace_id === ws && e.key === key) ?? null,
    listEntities: async (kind, ws) => all.filter((e) => e.kind === kind && e.workspace_id === ws),
  };
}

const member = (username: string, role: Member['role']) => ({ kind: 'member' as const, key: username, value: { username, role, added_by: 'admin' } });
const group = (name: string, members: string[]) => ({ kind: 'group' as const, key: name, value: { name, summary: '', members } satisfies Group });
const folder = (name: string, owners: string[], extra_perms: Record<string, boolean>) => ({
  kind: 'folder' as const,
  key: name,
  value: { name, summary: '', owners, extra_perms, created_by: 'x' } satisfies Folder,
});

const store = storeWith([
  member('ann', 'admin'),
  member('dev', 'developer'),
  member('op', 'operator'),
  member('grp', 'developer'),
  group('oncall', ['grp']),
  folder('ops', ['u/dev'], { 'u/op': false, 'g/oncall': true }),
  folder('open', [], { 'g/all': false }),
]);

const who = (username: string, extra: Partial<Principal> = {}): Principal => ({
  username,
  isSuperadmin: false,
  workspaceId: null,
  scopes: null,
  via: 'token',
  jobId: null,
  tokenHash: null,
  ...extra,
});

const rights = (p: Principal) => Rights.load({ store: store as Store }, p, 'ws');

describe('Rights', () => {
  it('gives users their own u/ space only', async () => {
    const dev = await rights(who('dev'));
    expect(dev.can('scripts', 'write', 'u/dev/x')).toBe(true);
    expect(dev.can('scripts', 'read', 'u/ann/x')).toBe(false);
  });

  it('follows folder owners, writers (users and groups) and readers', async () => {
    const [dev, op, grp] = await Promise.all([rights(who('dev')), rights(who('op')), rights(who('grp'))]);
    expect(dev.can('folders', 'write', 'ops')).toBe(true);
    expect(grp.can('variables', 'write', 'f/ops/v')).toBe(true);
    expect(grp.can('folders', 'write', 'ops')).toBe(false);
    expect(op.can('jobs', 'run', 'f/ops/s')).toBe(true);
    expect(op.can('scripts', 'write', 'f/ops/s')).toBe(false);
    // The implicit group `all` holds every member.
    expect(op.can('resources', 'read', 'f/open/db')).toBe(true);
    expect(op.can('resources', 'read', 'f/missing/db')).toBe(false);
  });

  it('never lets an operator write, even in their own space', async () => {
    const op = await rights(who('op'));
    expect(op.can('scripts', 'write', 'u/op/x')).toBe(false);
    expect(op.can('resources', 'write')).toBe(false);
    expect(op.can('folders', 'write', 'new')).toBe(false);
  });

  it('gives workspace admins and instance admins everything, and non-members nothing', async () => {
    expect((await rights(who('ann'))).can('variables', 'write', 'u/dev/secret')).toBe(true);
    expect((await rights(who('root', { isSuperadmin: true }))).can('workspaces', 'write')).toBe(true);
    const stranger = await rights(who('stranger'));
    expect(stranger.can('scripts', 'read')).toBe(false);
    expect(stranger.denial('scripts', 'read', null).message).toBe('stranger is not a member of workspace ws');
  });

  it('narrows an identity by the token: scopes and workspace', async () => {
    const scoped = await rights(who('ann', { scopes: parseScopes(['jobs:run:f/ops/deploy']) }));
    expect(scoped.can('jobs', 'run', 'f/ops/deploy')).toBe(true);
    expect(scoped.can('jobs', 'run', 'f/ops/other')).toBe(false);
    expect(scoped.can('variables', 'read', 'f/ops/v')).toBe(false);
    const elsewhere = await Rights.load({ store: store as Store }, who('ann', { isSuperadmin: true, workspaceId: 'other' }), 'ws');
    expect(elsewhere.can('scripts', 'read')).toBe(false);
  });

  it("lets a job's creator read and cancel it, and others only with rights on its script", async () => {
    const job = { created_by: 'op', script_path: 'u/dev/x' } as Job;
    expect((await rights(who('op'))).canJob(job, 'cancel')).toBe(true);
    expect((await rights(who('grp'))).canJob(job, 'read')).toBe(false);
    expect((await rights(who('dev'))).canJob(job, 'cancel')).toBe(true);
  });
});
