import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../functions/adapters/local/sqlite-store.js';
import { createEntity } from '../../functions/core/store/entities.js';
import { flowJobTarget, flowStepJobTarget, legacyScriptHash, resolveRunTarget, scriptJobTarget, type RunTarget } from '../../functions/core/jobs/run-target.js';
import type { FlowVersion } from '../../functions/core/flows/flow-documents.js';
import { aScriptVersion } from '../contract/store-fixtures.js';

/** The rules that decide what a webhook URL or a flow step runs, and whether the caller may. */

const clock = { now: () => new Date('2030-01-01T00:00:00.000Z') };
const WS = 'ws';
let store: SqliteStore;

function flowVersion(id: number, path: string): FlowVersion {
  return { id, path, summary: '', description: '', value: { modules: [] }, schema: null, created_by: 'alice', created_at: '2030-01-01T00:00:00.000Z' };
}

beforeEach(async () => {
  store = new SqliteStore(':memory:');
  await store.createWorkspace({ id: WS, name: WS, created_at: '2030-01-01T00:00:00.000Z', object_storage_enabled: false });
  await store.insertScriptVersion(aScriptVersion(WS, 'f/ops/script', { hash: 'h-script' }), null);
  await store.insertScriptVersion(aScriptVersion(WS, 'u/bob/private', { hash: 'h-private' }), null);
  await createEntity(store, clock, 'flow_version', WS, '000000000007', flowVersion(7, 'f/ops/flow'), 'v7');
  await createEntity(store, clock, 'flow', WS, 'f/ops/flow', { path: 'f/ops/flow', version: 7 }, 'flow');
});
afterEach(() => store.close());

const everything = () => true;
const onlyOps = (path: string) => path.startsWith('f/ops/');
const resolve = (target: RunTarget, mayRun: (path: string) => boolean = everything) => resolveRunTarget(store, WS, mayRun, target);

describe('resolving a run target', () => {
  it("refuses a hash whose script was deleted through another process, though this one ran it before", async () => {
    expect(await resolve({ by: 'hash', hash: 'h-script' })).toMatchObject({ ok: true });
    // Another Lambda: the same table, its own memory. It deletes the path; this process was not told.
    const elsewhere = Object.create(store) as SqliteStore;
    await elsewhere.deleteScriptPath(WS, 'f/ops/script');
    expect(await resolve({ by: 'hash', hash: 'h-script' })).toEqual({ ok: false, reason: 'not_found', what: 'script version h-script' });
  });

  it('finds the script or the flow a path names', async () => {
    expect(await resolve({ by: 'path', path: 'f/ops/script' })).toMatchObject({ ok: true, runnable: { kind: 'script', script: { hash: 'h-script' } } });
    expect(await resolve({ by: 'path', path: 'f/ops/flow' })).toMatchObject({ ok: true, runnable: { kind: 'flow', flow: { id: 7 } } });
  });

  it('looks for only the kind a flow step names', async () => {
    expect(await resolve({ by: 'path', path: 'f/ops/flow', only: 'script' })).toEqual({ ok: false, reason: 'not_found', what: 'script f/ops/flow' });
    expect(await resolve({ by: 'path', path: 'f/ops/script', only: 'flow' })).toEqual({ ok: false, reason: 'not_found', what: 'flow f/ops/script' });
  });

  it('checks a path before looking it up, so a caller cannot probe which paths exist', async () => {
    expect(await resolve({ by: 'path', path: 'u/bob/missing' }, onlyOps)).toEqual({ ok: false, reason: 'forbidden', path: 'u/bob/missing' });
    expect(await resolve({ by: 'path', path: 'f/ops/missing' }, onlyOps)).toEqual({ ok: false, reason: 'not_found', what: 'script or flow f/ops/missing' });
  });

  it('checks a hash or a flow version against the path it resolves to', async () => {
    expect(await resolve({ by: 'hash', hash: 'h-private' }, onlyOps)).toEqual({ ok: false, reason: 'forbidden', path: 'u/bob/private' });
    expect(await resolve({ by: 'hash', hash: 'h-script' }, onlyOps)).toMatchObject({ ok: true });
    expect(await resolve({ by: 'flow_version', version: '7' }, (p) => p !== 'f/ops/flow')).toEqual({ ok: false, reason: 'forbidden', path: 'f/ops/flow' });
    expect(await resolve({ by: 'hash', hash: 'nope' })).toEqual({ ok: false, reason: 'not_found', what: 'script version nope' });
  });

  it('takes only a positive whole number as a flow version', async () => {
    for (const version of ['0', '-7', '7.5', 'seven', '']) {
      expect(await resolve({ by: 'flow_version', version })).toEqual({ ok: false, reason: 'not_found', what: `flow version ${version}` });
    }
    expect(await resolve({ by: 'flow_version', version: '7' })).toMatchObject({ ok: true, runnable: { kind: 'flow', flow: { path: 'f/ops/flow' } } });
  });
});

describe('what a job records about its target', () => {
  it('keeps the script hash, the flow version and the step in fields of their own', () => {
    expect(scriptJobTarget({ path: 'f/a/s', hash: 'abc', language: 'bash' })).toEqual({ kind: 'script', script_path: 'f/a/s', script_hash: 'abc', flow_version: null, flow_module: null, language: 'bash' });
    expect(flowJobTarget('f/a/flow', 7)).toMatchObject({ kind: 'flow', script_hash: null, flow_version: 7, flow_module: null });
    expect(flowStepJobTarget('f/a/flow', 7, 'ask', 'python3')).toEqual({ kind: 'flowstep', script_path: 'f/a/flow/ask', script_hash: null, flow_version: 7, flow_module: 'ask', language: 'python3' });
  });

  it('still shows the API\'s script_hash as it always was', () => {
    expect(legacyScriptHash(scriptJobTarget({ path: 'f/a/s', hash: 'abc', language: 'bash' }))).toBe('abc');
    expect(legacyScriptHash(flowJobTarget('f/a/flow', 7))).toBe('7');
    expect(legacyScriptHash(flowStepJobTarget('f/a/flow', 7, 'ask', 'bash'))).toBe('7:ask');
  });
});
