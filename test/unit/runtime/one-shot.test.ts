import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Jail, JailSource } from '../../../functions/runtime/confinement.js';
import { inOneShotJobDir } from '../../../functions/runtime/one-shot.js';
import { request } from './runtime-helpers.js';

/**
 * A one-shot job (Bash, a Go binary without the serve loop) is answered as soon as its process has
 * ended with its outcome. Giving its jail back can take a while — bwrap's PID-namespace init, left
 * a zombie when bwrap exits, keeps the job's cgroup populated until the machine's PID 1 reaps it
 * (over half a second here) — and the answer must not wait for that; closing the runner's jails does.
 */
describe('one-shot job directories', () => {
  const workDir = mkdtempSync(join(tmpdir(), 'svc-one-shot-'));
  afterAll(() => rmSync(workDir, { recursive: true, force: true }));

  it('answer the job before its jail is given back', async () => {
    let finishRelease!: () => void;
    const released = new Promise<void>((resolve) => (finishRelease = resolve));
    const jail = { uid: undefined, workDir, release: () => released } as unknown as Jail;
    const jails: JailSource = { open: async () => jail, close: async () => undefined };
    const outcome = await inOneShotJobDir(request('bash', 'echo hi'), jails, 'sh', async () => ({ ok: true, result: 'hi', streamed: false }));
    expect(outcome).toEqual({ ok: true, result: 'hi', streamed: false });
    finishRelease();
  });
});
