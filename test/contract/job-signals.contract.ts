import { afterEach, describe, expect, it } from 'vitest';
import type { JobSignals } from '../../functions/ports.js';
import { uid } from './store-fixtures.js';

/**
 * What the core relies on from JobSignals, run against every adapter (the local emitter, the AWS
 * poll timer) so the two shells cannot drift. `wait` resolves on the next `notify` of that id in
 * this process, or after `ms`, whichever comes first; it never rejects and never hangs.
 *
 * Whether a *pending* wait keeps the process alive is where the shells differ on purpose, so each
 * adapter declares it and the contract checks the declaration:
 * - local: no. The timeout is only a safety net and must not keep `svc` (or a CLI) from exiting.
 * - AWS: yes. The timer is the poll itself; in Lambda an emptied event loop ends the invocation
 *   (the runtime treats it as the handler returning), so an unref'd poll would cut a sync wait or
 *   an SSE stream short.
 * What both must do: a wait that has settled leaves nothing behind to hold the process.
 */
export interface JobSignalsContractOptions {
  pendingWaitKeepsProcessAlive: boolean;
}

/** Generous bounds: a loaded CI machine is slow, but "prompt" must stay far below the wait's timeout. */
const PROMPT_MS = 500;
const LONG_MS = 10_000;

export function describeJobSignalsContract(name: string, make: () => JobSignals, options: JobSignalsContractOptions) {
  describe(`JobSignals contract: ${name}`, () => {
    // Waits a test leaves pending are woken afterwards, so none outlives its test.
    let pending: Array<{ signals: JobSignals; id: string }> = [];
    afterEach(() => {
      for (const { signals, id } of pending) signals.notify(id);
      pending = [];
    });

    function track(signals: JobSignals, id: string, ms: number) {
      pending.push({ signals, id });
      const state = { settled: false, at: 0 };
      const started = performance.now();
      const promise = signals.wait(id, ms).then(() => {
        state.settled = true;
        state.at = performance.now() - started;
      });
      return { state, promise };
    }

    it('hands a finished job from notify to the waiters of that id only, and nothing on a timeout', async () => {
      const signals = make();
      const [id, other] = [uid('job'), uid('job')];
      const waiting = signals.wait(id, LONG_MS);
      const otherWaiting = signals.wait(other, LONG_MS);
      signals.notify(id, { status: 'success', result: { answer: 42 } });
      expect(await waiting).toEqual({ status: 'success', result: { answer: 42 } });
      signals.notify(other);
      expect(await otherWaiting).toBeUndefined();
      expect(await signals.wait(uid('job'), 0)).toBeUndefined();
    });

    it('resolves a wait after about `ms` when nothing happens', async () => {
      const signals = make();
      const ms = 120;
      const { state, promise } = track(signals, uid('job'), ms);
      await promise;
      // Timers may fire a hair early against performance.now(), never much; and must fire.
      expect(state.at).toBeGreaterThanOrEqual(ms - 5);
      expect(state.at).toBeLessThan(ms + PROMPT_MS);
    });

    it('resolves a wait of 0 ms (the core waits 0 once its deadline has passed) at once', async () => {
      const signals = make();
      const { state, promise } = track(signals, uid('job'), 0);
      await promise;
      expect(state.at).toBeLessThan(PROMPT_MS);
    });

    it('is not woken by a notify of another id, nor by another id timing out', async () => {
      const signals = make();
      const mine = track(signals, uid('job'), LONG_MS);
      const other = uid('job');
      await signals.wait(other, 30);
      signals.notify(other);
      signals.notify(`${other}-suffix`);
      await sleep(50);
      expect(mine.state.settled).toBe(false);
    });

    it('wakes a waiter promptly on a notify of its id, well before its timeout', async () => {
      const signals = make();
      const id = uid('job');
      const { state, promise } = track(signals, id, LONG_MS);
      setTimeout(() => signals.notify(id), 20);
      await promise;
      expect(state.at).toBeLessThan(PROMPT_MS);
    });

    it('wakes every concurrent waiter on the id with one notify, without listener warnings', async () => {
      const signals = make();
      const id = uid('job');
      const warnings: Error[] = [];
      const onWarning = (w: Error) => warnings.push(w);
      process.on('warning', onWarning);
      try {
        // Sync waits and SSE streams of one popular job, plus its cancel watcher.
        const waiters = Array.from({ length: 200 }, () => track(signals, id, LONG_MS));
        const bystander = track(signals, uid('job'), LONG_MS);
        await sleep(10);
        signals.notify(id);
        await Promise.all(waiters.map((w) => w.promise));
        expect(Math.max(...waiters.map((w) => w.state.at))).toBeLessThan(PROMPT_MS);
        expect(bystander.state.settled).toBe(false);
        await sleep(0);
        expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
      } finally {
        process.off('warning', onWarning);
      }
    });

    it('does not remember a notify nobody waited for: the next wait waits again', async () => {
      // Remembering would grow without bound on a busy server (every job notifies, few are awaited).
      const signals = make();
      const id = uid('job');
      signals.notify(id);
      const { state, promise } = track(signals, id, 80);
      await promise;
      expect(state.at).toBeGreaterThanOrEqual(75);
    });

    it('wakes the waits pending at a notify, not the ones that start after it', async () => {
      const signals = make();
      const id = uid('job');
      const first = track(signals, id, LONG_MS);
      signals.notify(id);
      await first.promise;
      const second = track(signals, id, LONG_MS);
      await sleep(50);
      expect(second.state.settled).toBe(false);
      signals.notify(id);
      await second.promise;
    });

    it('leaves nothing holding the process once a wait has settled, by notify or by timeout', async () => {
      const signals = make();
      const before = activeResources();
      const id = uid('job');
      const woken = Array.from({ length: 20 }, () => track(signals, id, LONG_MS));
      signals.notify(id);
      await Promise.all(woken.map((w) => w.promise));
      await Promise.all(Array.from({ length: 20 }, () => signals.wait(uid('job'), 10)));
      expect(activeResources()).toEqual(before);
    });

    it(`${options.pendingWaitKeepsProcessAlive ? 'keeps' : 'does not keep'} the process alive while a wait is pending`, async () => {
      const signals = make();
      const before = activeResources();
      const id = uid('job');
      const { promise } = track(signals, id, LONG_MS);
      const during = activeResources();
      signals.notify(id);
      await promise;
      // Unref'd timers, sockets and the like are left out of the active resources by Node.
      if (options.pendingWaitKeepsProcessAlive) expect(during.length).toBeGreaterThan(before.length);
      else expect(during).toEqual(before);
      expect(activeResources()).toEqual(before);
    });
  });
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** What keeps this thread's event loop alive (ref'd timers, handles, requests), sorted. */
function activeResources(): string[] {
  return process.getActiveResourcesInfo().sort();
}
