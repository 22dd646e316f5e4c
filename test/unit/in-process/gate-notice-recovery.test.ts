import { describe, expect, it } from 'vitest';
import { inProcessService, json, until } from './harness.js';
import { advanceFlow } from '../../../functions/core/flows/advance.js';
import { runsWithPendingNotices } from '../../../functions/core/flows/timers.js';
import type { EmailMessage } from '../../../functions/ports.js';
import type { WorkerDeps } from '../../../functions/core/deps.js';

/**
 * A ConsentGate's notices are not lost when the process dies while sending them: the run is
 * stored waiting with its notices pending, each shell finds such runs (the local service when it
 * starts, the maintenance function on AWS) and wakes them, and the interpreter's next look at the
 * waiting gate sends them. Here the "dead" process is a send that never returns; the later turn
 * is what a restart or the maintenance wake runs. test/http/consent-gate.test.ts does the same
 * with a real kill -9.
 */

describe('ConsentGate notices after a crash', () => {
  it('are pending while unsent, and sent by the next look at the waiting gate', async () => {
    const mails: EmailMessage[] = [];
    let dead = true;
    const email = { send: (m: EmailMessage) => (dead ? new Promise<void>(() => {}) : Promise.resolve(void mails.push(m))) };
    const s = await inProcessService({ email });
    await s.post('/api/users/create', { username: 'fiona', email: 'fiona@example.com', password: 'fiona-password' });
    await s.post('/api/w/main/workspaces/add_user', { username: 'fiona', role: 'operator' });
    const flow = { path: 'u/admin/pay', value: { modules: [{ id: 'gate', value: { type: 'consentgate', approvers: ['fiona'], notify: [{ channel: 'email' }], message: 'pay 42?' } }] } };
    expect((await s.fetch('/api/w/main/flows/create', json(flow))).status).toBe(201);
    const id = await (await s.post('/api/w/main/jobs/run/p/u/admin/pay', {})).text();
    const view = async () => (await (await s.fetch(`/api/w/main/jobs_u/get/${id}`)).json()) as Record<string, any>;

    // The run waits with its notice pending: the sending "process" never came back.
    const stuck = await until(view, (j) => j.status === 'awaiting_approval');
    expect(stuck.flow_status.gate).toMatchObject({ notices: 'pending', deliveries: [] });
    expect(await runsWithPendingNotices(s.deps)).toEqual([{ workspaceId: 'main', flowJobId: id }]);

    // Another turn, as after a restart: the notice goes out, once recorded it is no longer pending.
    dead = false;
    await advanceFlow(s.deps as WorkerDeps, 'main', id);
    expect(mails).toMatchObject([{ to: 'fiona@example.com', subject: 'Approval needed: u/admin/pay' }]);
    expect(mails[0].text).toContain('pay 42?');
    const sent = await view();
    expect(sent.status).toBe('awaiting_approval');
    expect(sent.flow_status.gate).toMatchObject({ notices: 'done', deliveries: [{ channel: 'email', target: 'fiona', attempt: 1, ok: true }] });
    expect(await runsWithPendingNotices(s.deps)).toEqual([]);

    // Looking again sends nothing more.
    await advanceFlow(s.deps as WorkerDeps, 'main', id);
    expect(mails).toHaveLength(1);
  });
});
