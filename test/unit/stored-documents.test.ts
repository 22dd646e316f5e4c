import { describe, expect, it } from 'vitest';
import { SqliteStore } from '../../functions/adapters/local/sqlite-store.js';
import { StoredDocumentError, parseStored } from '../../functions/core/documents/parse.js';
import { jobRecord, scriptVersionRecord } from '../../functions/core/documents/records.js';
import { ENTITY_VALUES } from '../../functions/core/documents/entity-values.js';
import { createEntity, getEntityValue, listEntityValues } from '../../functions/core/store/entities.js';
import { ENTITY_KINDS } from '../../functions/ports.js';
import { newRun } from '../../functions/core/flows/flow-run-document.js';
import { resolveRun } from '../../functions/core/flows/flow-run-document.js';
import { dueSuspendedFlows } from '../../functions/core/flows/timers.js';
import { aJob, aScriptVersion, aWorkspace } from '../contract/store-fixtures.js';

const clock = { now: () => new Date('2030-01-01T00:00:00.000Z') };

describe('stored records', () => {
  it('reads a job whose flow version was packed into script_hash (items written before flow_version) in the new shape', () => {
    const legacy = { ...aJob('ws'), kind: 'flowstep', script_hash: '17:ask' } as Record<string, unknown>;
    delete legacy.flow_version;
    delete legacy.flow_module;
    expect(parseStored(jobRecord, legacy, 'job j')).toMatchObject({ kind: 'flowstep', script_hash: null, flow_version: 17, flow_module: 'ask' });
    const flow = { ...legacy, kind: 'flow', script_hash: '17' };
    expect(parseStored(jobRecord, flow, 'job j')).toMatchObject({ kind: 'flow', script_hash: null, flow_version: 17, flow_module: null });
  });

  it('refuses a job whose target fields contradict its kind, naming the job and the field', () => {
    const bad = { ...aJob('ws', { id: 'j1' }), kind: 'flow', script_hash: null, flow_version: null };
    expect(() => parseStored(jobRecord, bad, 'job j1')).toThrow(StoredDocumentError);
    expect(() => parseStored(jobRecord, bad, 'job j1')).toThrow(/stored job j1 does not match its schema: flow_version/);
  });

  it('is an API error with a typed code, never the stored value (it may be a secret)', () => {
    const script = { ...aScriptVersion('ws', 'f/a/s'), language: 'cobol', content: 'hunter2-secret' };
    try {
      parseStored(scriptVersionRecord, script, 'script version h1');
      expect.unreachable();
    } catch (e) {
      expect(e).toMatchObject({ status: 500, code: 'invalid_stored_document', details: { document: 'script version h1', field: 'language' } });
      expect(String((e as Error).message)).not.toContain('hunter2');
    }
  });

  it('refuses to write a record that does not match, and writes nothing', async () => {
    const store = new SqliteStore(':memory:');
    try {
      const ws = aWorkspace();
      await store.createWorkspace(ws);
      const job = { ...aJob(ws.id), status: 'exploded' } as unknown as Parameters<typeof store.insertJob>[0];
      await expect(store.insertJob(job)).rejects.toMatchObject({ code: 'invalid_stored_document' });
      expect(await store.getJob(ws.id, job.id)).toBeNull();
    } finally {
      store.close();
    }
  });
});

describe('workspace documents', () => {
  it('has one schema for every entity kind the Store holds', () => {
    expect(Object.keys(ENTITY_VALUES).sort()).toEqual([...ENTITY_KINDS].sort());
  });

  it("keeps what a flow run decided when it is read back: a failure's status (canceled after an approval) and the steps answered from their cache", () => {
    const run = { ...newRun('f1', 1, 'u/a/f', [], {}, {}), failure: { result: { error: { name: 'Canceled' } }, step_id: 'ask', started: true, status: 'canceled' as const }, cache_hits: { quote: 'j9' } };
    expect(ENTITY_VALUES.flow_run.parse(run)).toEqual(run);
  });

  it("reads a loop or branchall step stored with its jobs' whole records as their ids, none known to have ended, so the next turn looks", () => {
    const jobs = [aJob('ws', { id: 'it0', kind: 'flow', script_hash: null, flow_version: 1, created_at: '2030-01-01T00:00:01.000Z' }), aJob('ws', { id: 'it1', kind: 'flow', script_hash: null, flow_version: 1 })];
    const legacy = { ...newRun('f1', 1, 'u/a/f', [], {}, {}), step: { kind: 'children', module: 'loop', jobs, parallel: true, started: 2, skip_failures: [false, false] } };
    expect(parseStored(ENTITY_VALUES.flow_run, legacy, 'flow_run f1').step).toEqual({
      kind: 'children',
      module: 'loop',
      jobs: ['it0', 'it1'],
      created_at: '2030-01-01T00:00:01.000Z',
      parallel: true,
      started: 2,
      ended: [false, false],
      skip_failures: [false, false],
    });
  });

  it("reads a branch's or iteration's run that holds its enclosing run's results as it was stored, and one that names that run through it", async () => {
    const store = new SqliteStore(':memory:');
    const legacy = { ...newRun('it1', 1, 'u/a/f', [], {}, { fetch: [1, 2] }) };
    expect((await resolveRun(store, 'ws', parseStored(ENTITY_VALUES.flow_run, legacy, 'flow_run it1'), null)).outer_results).toEqual({ fetch: [1, 2] });
    const parent = { ...newRun('top', 1, 'u/a/f', [], {}, { before: 0 }), results: { fetch: [3] } };
    const { outer_results: _none, ...named } = { ...newRun('it2', 1, 'u/a/f', [], {}, {}), outer_from: 'top' };
    const doc = parseStored(ENTITY_VALUES.flow_run, named, 'flow_run it2');
    expect((await resolveRun(store, 'ws', doc, async (id) => (id === 'top' ? { value: parent } : null))).outer_results).toEqual({ before: 0, fetch: [3] });
    expect((await resolveRun(store, 'ws', doc, null)).outer_results).toEqual({});
    store.close();
  });

  it("refuses a flow run or a job whose maps (inputs, results, step modules, arguments) are not objects of what they hold, naming the field", () => {
    const run = { ...newRun('f1', 1, 'u/a/f', [], { n: 1 }, {}), results: { a: { deep: [1] } }, step_modules: { j1: 'a' }, cache_hits: { a: 'j0' } };
    expect(parseStored(ENTITY_VALUES.flow_run, run, 'flow_run f1')).toEqual(run);
    const refused: [string, unknown][] = [
      ['results', [1, 2]],
      ['flow_input', null],
      ['outer_results', 'text'],
      ['results', new Date(0)],
      ['step_modules', { j1: 7 }],
      ['cache_hits', { a: null }],
    ];
    for (const [field, value] of refused) {
      expect(() => parseStored(ENTITY_VALUES.flow_run, { ...run, [field]: value }, 'flow_run f1'), field).toThrow(new RegExp(`stored flow_run f1 does not match its schema: ${field}: expected an object`));
    }
    expect(parseStored(jobRecord, aJob('ws', { args: { x: [1] } }), 'job j').args).toEqual({ x: [1] });
    expect(() => parseStored(jobRecord, aJob('ws', { args: ['x'] as unknown as Record<string, unknown> }), 'job j')).toThrow(/stored job j does not match its schema: args/);
  });

  it('reads a document through its kind\'s schema', async () => {
    const store = new SqliteStore(':memory:');
    try {
      await createEntity(store, clock, 'group', 'ws', 'ops', { name: 'ops', summary: '', members: ['alice'] }, 'group ops');
      expect(await getEntityValue(store, 'group', 'ws', 'ops')).toEqual({ name: 'ops', summary: '', members: ['alice'] });
    } finally {
      store.close();
    }
  });

  it('turns a stored document that does not match into a clear error, not a crash elsewhere', async () => {
    const store = new SqliteStore(':memory:');
    try {
      // Written past the core, as a hand edit or an old shape would be.
      await store.createEntity({ kind: 'group', workspace_id: 'ws', key: 'ops', value: { name: 'ops', members: 'alice' }, version: 1, created_at: 'x', updated_at: 'x' });
      await expect(getEntityValue(store, 'group', 'ws', 'ops')).rejects.toMatchObject({
        code: 'invalid_stored_document',
        message: expect.stringMatching(/stored group ops in ws does not match its schema: summary/),
      });
      await expect(listEntityValues(store, 'group', 'ws')).rejects.toBeInstanceOf(StoredDocumentError);
    } finally {
      store.close();
    }
  });

  it('refuses to store a document that does not match its kind, and stores nothing', async () => {
    const store = new SqliteStore(':memory:');
    try {
      const member = { username: 'bob', role: 'superuser', added_by: 'alice' } as unknown as Parameters<typeof createEntity<'member'>>[5];
      await expect(createEntity(store, clock, 'member', 'ws', 'bob', member, 'member bob')).rejects.toMatchObject({ code: 'invalid_stored_document' });
      expect(await store.getEntity('member', 'ws', 'bob')).toBeNull();
    } finally {
      store.close();
    }
  });
});

describe('approval timers', () => {
  it('still finds due flows when another flow run does not match its schema', async () => {
    const store = new SqliteStore(':memory:');
    try {
      await store.createWorkspace({ ...aWorkspace(), id: 'ws' });
      const due = { ...newRun('good', 7, 'f/a/flow', [], {}, {}), status: 'suspended' as const };
      due.step = { kind: 'suspend', module: 'ask', resume_job: 'step', required: 1, deadline: '2029-01-01T00:00:00.000Z', step_result: null };
      await createEntity(store, clock, 'flow_run', 'ws', 'good', due, 'run');
      await store.createEntity({ kind: 'flow_run', workspace_id: 'ws', key: 'broken', value: { status: 'suspended' }, version: 1, created_at: 'x', updated_at: 'x' });
      expect(await dueSuspendedFlows({ store, clock }, { includeFuture: false })).toEqual([{ workspaceId: 'ws', flowJobId: 'good' }]);
    } finally {
      store.close();
    }
  });
});

