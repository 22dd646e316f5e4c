import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Store, Workspace } from '../../functions/ports.js';
import { aJob, anEntity, aWorkspace, eventually, uid } from './store-fixtures.js';

/**
 * The Store contract for what a person's own listings read without a look in every workspace
 * (part of describeStoreContract): the workspaces a user is a member of, their invitations, and
 * a job by its id alone. Additions may reach a listing a moment late (an index in DynamoDB): `eventually`.
 */
export function describeMembershipContract(getStore: () => Store) {
  const ids = (workspaces: Workspace[]) => workspaces.map((w) => w.id);

  async function workspaceWith(store: Store, id = uid('ws')): Promise<Workspace> {
    const ws = aWorkspace({ id });
    await store.createWorkspace(ws);
    return ws;
  }

  describe('memberships', () => {
    it("lists the workspaces holding the user's member entity, ordered by id, and nothing of other users or kinds", async () => {
      const store = getStore();
      const user = uid('ada');
      const [b, a, c] = [await workspaceWith(store, uid('mem-b')), await workspaceWith(store, uid('mem-a')), await workspaceWith(store, uid('mem-c'))];
      await store.createEntity(anEntity('member', b.id, user, { value: { username: user, role: 'developer' } }));
      await store.createEntity(anEntity('member', a.id, user, { value: { username: user, role: 'admin' } }));
      // The same key in another kind, and another user's membership, are not this user's.
      await store.createEntity(anEntity('invite', c.id, user));
      await store.createEntity(anEntity('group', c.id, user));
      await store.createEntity(anEntity('member', c.id, uid('bob')));
      await store.createEntity(anEntity('member', c.id, `${user}x`));

      const listed = await eventually(() => store.listMemberWorkspaces(user), (l) => l.length === 2);
      expect(listed).toEqual([a, b]);
      expect(await store.listMemberWorkspaces(uid('nobody'))).toEqual([]);
    });

    it('follows member writes: a role change keeps the workspace, a removal drops it at once', async () => {
      const store = getStore();
      const user = uid('ada');
      const [ws, other] = [await workspaceWith(store), await workspaceWith(store)];
      const member = anEntity('member', ws.id, user, { value: { username: user, role: 'viewer' } });
      await store.createEntity(member);
      await store.createEntity(anEntity('member', other.id, user));
      expect(ids(await eventually(() => store.listMemberWorkspaces(user), (l) => l.length === 2)).sort()).toEqual([ws.id, other.id].sort());

      expect(await store.replaceEntity({ ...member, value: { username: user, role: 'admin' }, version: 2 }, 1)).toBe(true);
      expect(ids(await store.listMemberWorkspaces(user)).sort()).toEqual([ws.id, other.id].sort());

      // A removed member is never listed, not even a moment after (authorization reads this).
      expect(await store.deleteEntity('member', ws.id, user)).toBe(true);
      expect(ids(await store.listMemberWorkspaces(user))).toEqual([other.id]);
      expect(await store.deleteEntity('member', other.id, user)).toBe(true);
      expect(await store.listMemberWorkspaces(user)).toEqual([]);

      // Added again: listed again.
      await store.createEntity(anEntity('member', ws.id, user));
      expect(ids(await eventually(() => store.listMemberWorkspaces(user), (l) => l.length === 1))).toEqual([ws.id]);
    });

    it('leaves out a membership of a workspace that does not exist (deleted, or never created)', async () => {
      const store = getStore();
      const user = uid('ada');
      const ws = await workspaceWith(store);
      await store.createEntity(anEntity('member', ws.id, user));
      await store.createEntity(anEntity('member', uid('gone'), user));
      expect(ids(await eventually(() => store.listMemberWorkspaces(user), (l) => l.length >= 1))).toEqual([ws.id]);
    });

    it("lists the user's invitations in every workspace, ordered by workspace, until each is removed", async () => {
      const store = getStore();
      const user = uid('ada');
      const [b, a] = [await workspaceWith(store, uid('inv-b')), await workspaceWith(store, uid('inv-a'))];
      const invite = (ws: string) => anEntity('invite', ws, user, { value: { username: user, role: 'developer', invited_by: 'admin' } });
      await store.createEntity(invite(b.id));
      await store.createEntity(invite(a.id));
      await store.createEntity(anEntity('member', a.id, user));
      await store.createEntity(anEntity('invite', a.id, uid('bob')));
      const listed = await eventually(() => store.listInvitesOf(user), (l) => l.length === 2);
      expect(listed).toEqual([await store.getEntity('invite', a.id, user), await store.getEntity('invite', b.id, user)]);
      expect(listed.map((e) => e.workspace_id)).toEqual([a.id, b.id]);

      // Accepted or declined: gone at once.
      expect(await store.deleteEntity('invite', a.id, user)).toBe(true);
      expect((await store.listInvitesOf(user)).map((e) => e.workspace_id)).toEqual([b.id]);
      expect(await store.listInvitesOf(uid('nobody'))).toEqual([]);
    });

    it('finds a job by its id alone, in whichever workspace holds it', async () => {
      const store = getStore();
      const [ws, other] = [await workspaceWith(store), await workspaceWith(store)];
      const job = aJob(ws.id);
      const elsewhere = aJob(other.id);
      await store.insertJob(job);
      await store.insertJob(elsewhere);
      expect(await store.findJobById(job.id)).toEqual(job);
      expect(await store.findJobById(elsewhere.id)).toEqual(elsewhere);
      expect(await store.findJobById(randomUUID())).toBeNull();
    });
  });
}
