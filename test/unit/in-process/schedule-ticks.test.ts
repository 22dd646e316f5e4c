import { describe, expect, it } from 'vitest';
import { runAllDueTicks, runDueTick } from '../../../functions/core/triggers/schedule-ticks.js';
import { createScript, inProcessService, interruptWrites } from './harness.js';

/**
 * The core's tick rules (issue 21) on a clock the test moves: a tick runs once however many
 * tickers race for it, runs missed while nothing ticked collapse to the latest one, and a
 * schedule counts from when it was created or enabled.
 */

async function setUp() {
  const s = await inProcessService();
  await createScript(s, 'u/admin/work', 'export function main(n: number) { return n * 2 }');
  // A whole second: croner's ticks fall on whole seconds.
  s.clock.advance(1000 - (s.clock.now().getTime() % 1000));
  const res = await s.post('/api/w/main/schedules/create', {
    path: 'u/admin/every5s',
    schedule: '*/5 * * * * *',
    script_path: 'u/admin/work',
    args: { n: 21 },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  const runs = async () => (await s.deps.store.listJobs({ workspace_id: 'main', schedule_path: 'u/admin/every5s', limit: 100 })).length;
  return { s, runs };
}

describe('schedule ticks', () => {
  it('runs a due tick once when several tickers race for it, with the schedule named on the job', async () => {
    const { s, runs } = await setUp();
    expect((await runDueTick(s.deps, 'main', 'u/admin/every5s', s.clock.now())).ran).toBe(false);
    s.clock.advance(5000);
    const outcomes = await Promise.all([1, 2, 3, 4].map(() => runDueTick(s.deps, 'main', 'u/admin/every5s', s.clock.now())));
    expect(outcomes.filter((o) => o.ran)).toHaveLength(1);
    expect(await runs()).toBe(1);
    const [job] = await s.deps.store.listJobs({ workspace_id: 'main', schedule_path: 'u/admin/every5s', limit: 1 });
    expect(await s.job(job.id)).toMatchObject({ status: 'success', result: 42, schedule_path: 'u/admin/every5s', created_by: 'admin' });
    // The same tick again, as a second process or a retried timer would: nothing.
    expect(await runDueTick(s.deps, 'main', 'u/admin/every5s', s.clock.now())).toEqual({ ran: false, reason: 'not_due' });
    expect(await runs()).toBe(1);
  });

  it('still runs a due tick when a user edit wins the race for the schedule', async () => {
    const { s, runs } = await setUp();
    s.clock.advance(5000);
    const store = s.deps.store;
    const replace = store.replaceEntity.bind(store);
    let edited = false;
    // The user saves the schedule between the ticker's read and its claim.
    store.replaceEntity = async (e, version, events) => {
      if (!edited && e.kind === 'schedule') {
        edited = true;
        const res = await s.post('/api/w/main/schedules/update/u/admin/every5s', {
          schedule: '*/5 * * * * *',
          script_path: 'u/admin/work',
          args: { n: 1 },
          summary: 'edited',
        });
        expect(res.status).toBe(200);
      }
      return replace(e, version, events);
    };
    const outcome = await runDueTick(s.deps, 'main', 'u/admin/every5s', s.clock.now());
    expect(edited).toBe(true);
    expect(outcome.ran).toBe(true);
    expect(await runs()).toBe(1);
  });

  it('still runs a due tick when other writes beat its claim many times in a row (outcomes counted on a busy schedule)', async () => {
    const { s, runs } = await setUp();
    s.clock.advance(5000);
    // Another write (a run's failure counted on the schedule) lands between each read and claim.
    const interruptionsLeft = interruptWrites(s, 8, (e) => e.kind === 'schedule');
    const outcome = await runDueTick(s.deps, 'main', 'u/admin/every5s', s.clock.now());
    expect(interruptionsLeft()).toBe(0);
    expect(outcome.ran).toBe(true);
    expect(await runs()).toBe(1);
  });

  it('runs only the latest of the ticks missed while nothing ticked', async () => {
    const { s, runs } = await setUp();
    s.clock.advance(60_000);
    expect(await runAllDueTicks(s.deps, s.clock.now())).toBe(1);
    expect(await runAllDueTicks(s.deps, s.clock.now())).toBe(0);
    expect(await runs()).toBe(1);
    s.clock.advance(5000);
    expect(await runAllDueTicks(s.deps, s.clock.now())).toBe(1);
    expect(await runs()).toBe(2);
  });

  it('does not run ticks missed while disabled once enabled again, and nothing while disabled', async () => {
    const { s, runs } = await setUp();
    expect((await s.post('/api/w/main/schedules/setenabled/u/admin/every5s', { enabled: false })).status).toBe(200);
    s.clock.advance(30_000);
    expect(await runDueTick(s.deps, 'main', 'u/admin/every5s', s.clock.now())).toEqual({ ran: false, reason: 'disabled' });
    expect((await s.post('/api/w/main/schedules/setenabled/u/admin/every5s', { enabled: true })).status).toBe(200);
    expect((await runDueTick(s.deps, 'main', 'u/admin/every5s', s.clock.now())).ran).toBe(false);
    expect(await runs()).toBe(0);
    s.clock.advance(5000);
    expect((await runDueTick(s.deps, 'main', 'u/admin/every5s', s.clock.now())).ran).toBe(true);
    expect(await runs()).toBe(1);
  });
});

describe('schedule events', () => {
  it('announces creating, changing and deleting a schedule to the workspace webhook, in the same write', async () => {
    const { s } = await setUp();
    expect((await s.post('/api/w/main/workspaces/edit_webhook', { webhook: 'https://hooks.example.com/svc' })).status).toBe(200);
    expect(
      (await s.post('/api/w/main/schedules/create', { path: 'u/admin/hourly', schedule: '0 0 * * * *', script_path: 'u/admin/work' }))
        .status,
    ).toBe(201);
    expect((await s.post('/api/w/main/schedules/setenabled/u/admin/every5s', { enabled: false })).status).toBe(200);
    expect((await s.fetch('/api/w/main/schedules/delete/u/admin/every5s', { method: 'DELETE' })).status).toBe(200);
    // Newest first.
    const events = (await s.store.listDeliveries('main', 100)).map((d) => JSON.parse(d.body));
    expect(events.map((e) => [e.type, e.subject, e.data.enabled])).toEqual([
      ['DeleteSchedule', 'u/admin/every5s', undefined],
      ['UpdateSchedule', 'u/admin/every5s', false],
      ['CreateSchedule', 'u/admin/hourly', true],
    ]);
    expect(events[2].data).toMatchObject({ workspace: 'main', kind: 'schedule', user: 'admin', script_path: 'u/admin/work' });
  });
});
