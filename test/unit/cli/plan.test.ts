import { describe, expect, it } from 'vitest';
import { INVALID, planSync, type RemoteSide } from '../../../functions/cli/plan.js';
import { applyPush } from '../../../functions/cli/sync.js';
import { payloadHash, type Item, type ItemKind, type KindHandler, type SyncContext } from '../../../functions/cli/items.js';

/** The planner's three-way decision (local, remote, last sync) and the order and parallelism of a push. */

const item = (id: string, v: unknown, kind: ItemKind = 'resource'): Item => ({ kind, id, payload: { path: id, v }, files: { [`${id}.resource.yaml`]: `v: ${JSON.stringify(v)}\n` } });
const key = (id: string, kind: ItemKind = 'resource') => `${kind}:${id}`;
const remoteOf = (...items: Item[]) => new Map<string, RemoteSide>(items.map((i) => [key(i.id, i.kind), { item: i, meta: {} }]));
const localOf = (...items: Item[]) => new Map<string, Item | typeof INVALID>(items.map((i) => [key(i.id, i.kind), i]));
const baseOf = (...items: Item[]) => new Map(items.map((i) => [key(i.id, i.kind), payloadHash(i.payload)]));
const ops = (plan: ReturnType<typeof planSync>) => plan.changes.map((c) => `${c.op}${c.id}`);

describe('planSync', () => {
  it('push: sends local creations, edits and deletions, nothing else', () => {
    const a = item('f/x/a', 1), b = item('f/x/b', 1), c = item('f/x/c', 1), same = item('f/x/same', 1);
    const plan = planSync('push', localOf(item('f/x/a', 2), c, same, item('f/x/new', 1)), remoteOf(a, b, c, same), baseOf(a, b, c, same), { force: false });
    expect(ops(plan).sort()).toEqual(['+f/x/new', '-f/x/b', '~f/x/a']);
    expect(plan.conflicts).toEqual([]);
  });

  it('push: never deletes a remote item that was never pulled', () => {
    const plan = planSync('push', localOf(), remoteOf(item('f/x/remote_only', 1)), new Map(), { force: false });
    expect(plan.changes).toEqual([]);
    expect(plan.pending.map((p) => p.id)).toEqual(['f/x/remote_only']);
  });

  it('push: leaves remote edits alone when the local file did not change', () => {
    const a = item('f/x/a', 1);
    const plan = planSync('push', localOf(a), remoteOf(item('f/x/a', 2)), baseOf(a), { force: false });
    expect(plan.changes).toEqual([]);
    expect(plan.pending).toHaveLength(1);
  });

  it('reports an item changed on both sides as a conflict, applied only with force', () => {
    const a = item('f/x/a', 1);
    for (const direction of ['push', 'pull'] as const) {
      const plan = planSync(direction, localOf(item('f/x/a', 2)), remoteOf(item('f/x/a', 3)), baseOf(a), { force: false });
      expect(plan.changes).toEqual([]);
      expect(plan.conflicts.map((c) => c.id)).toEqual(['f/x/a']);
      const forced = planSync(direction, localOf(item('f/x/a', 2)), remoteOf(item('f/x/a', 3)), baseOf(a), { force: true });
      expect(forced.changes.map((c) => [c.op, c.conflict])).toEqual([['~', true]]);
    }
  });

  it('treats a local deletion against a remote edit as a conflict', () => {
    const a = item('f/x/a', 1);
    const plan = planSync('push', localOf(), remoteOf(item('f/x/a', 2)), baseOf(a), { force: false });
    expect(plan.conflicts.map((c) => c.op)).toEqual(['-']);
  });

  it('pull: brings remote changes, keeps unpushed local edits, deletes what the remote deleted', () => {
    const a = item('f/x/a', 1), b = item('f/x/b', 1), gone = item('f/x/gone', 1);
    const plan = planSync('pull', localOf(a, item('f/x/b', 2), gone), remoteOf(item('f/x/a', 5), b, item('f/x/new', 1)), baseOf(a, b, gone), { force: false });
    expect(ops(plan).sort()).toEqual(['+f/x/new', '-f/x/gone', '~f/x/a']);
  });

  it('pull: without a last sync, an existing differing local file is a conflict, an equal one is in sync', () => {
    const plan = planSync('pull', localOf(item('f/x/a', 1), item('f/x/b', 1)), remoteOf(item('f/x/a', 2), item('f/x/b', 1)), new Map(), { force: false });
    expect(plan.conflicts.map((c) => c.id)).toEqual(['f/x/a']);
    expect([...plan.inSync.keys()]).toEqual(['resource:f/x/b']);
  });

  it('never pushes or deletes an item whose local files are invalid', () => {
    const a = item('f/x/a', 1);
    const local = new Map<string, Item | typeof INVALID>([[key('f/x/a'), INVALID]]);
    expect(planSync('push', local, remoteOf(a), baseOf(a), { force: true }).changes).toEqual([]);
  });
});

describe('applyPush', () => {
  /** A handler whose operations wait until released, recording how many run at once. */
  function gatedHandler(kind: ItemKind, log: string[]) {
    let inFlight = 0;
    let maxInFlight = 0;
    const waiting: (() => void)[] = [];
    const op = (what: string) => async () => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      log.push(what);
      // Wait until every operation the pool allows has started (or this is the last one).
      await new Promise<void>((resolve) => {
        waiting.push(resolve);
        queueMicrotask(() => queueMicrotask(() => waiting.splice(0).forEach((r) => r())));
      });
      inFlight--;
    };
    const handler: KindHandler = {
      kind,
      enabled: () => true,
      fetchRemote: async () => [],
      claim: () => null,
      parse: async () => {
        throw new Error('unused');
      },
      push: (i) => op(`push ${kind} ${i.id}`)(),
      remove: (id) => op(`remove ${kind} ${id}`)(),
    };
    return { handler, max: () => maxInFlight };
  }

  const ctx = (parallel?: number) => ({ options: { skipSecrets: true, parallel }, warn: () => {} }) as unknown as SyncContext;
  const changesOf = (kind: ItemKind, n: number, op: '+' | '-' = '+') =>
    Array.from({ length: n }, (_, i) => ({ op, kind, id: `f/x/${i}`, key: key(`f/x/${i}`, kind), local: item(`f/x/${i}`, i, kind), conflict: false }));

  it('runs `parallel` operations at a time, and one at a time without it', async () => {
    for (const [parallel, expected] of [[3, 3], [undefined, 1], [10, 6]] as const) {
      const gate = gatedHandler('resource', []);
      const result = await applyPush(changesOf('resource', 6), ctx(parallel), () => {}, [gate.handler]);
      expect(result.applied).toHaveLength(6);
      expect(gate.max()).toBe(expected);
    }
  });

  it('creates in dependency order and deletes in reverse', async () => {
    const log: string[] = [];
    const folders = gatedHandler('folder', log), resources = gatedHandler('resource', log);
    const changes = [...changesOf('resource', 1), ...changesOf('resource', 1, '-').map((c) => ({ ...c, id: 'f/x/old' })), ...changesOf('folder', 1), ...changesOf('folder', 1, '-').map((c) => ({ ...c, id: 'old' }))];
    await applyPush(changes, ctx(4), () => {}, [folders.handler, resources.handler]);
    expect(log).toEqual(['push folder f/x/0', 'push resource f/x/0', 'remove resource f/x/old', 'remove folder old']);
  });

  it('goes on after a failed operation and reports it', async () => {
    const failing: KindHandler = { ...gatedHandler('resource', []).handler, push: async (i) => { if (i.id === 'f/x/1') throw new Error('boom'); } };
    const result = await applyPush(changesOf('resource', 3), ctx(1), () => {}, [failing]);
    expect(result.applied.map((c) => c.id)).toEqual(['f/x/0', 'f/x/2']);
    expect(result.failed.map((f) => [f.change.id, f.error])).toEqual([['f/x/1', 'boom']]);
  });
});
