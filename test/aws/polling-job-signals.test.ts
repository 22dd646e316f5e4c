import { describe, expect, it } from 'vitest';
import { PollingJobSignals } from '../../functions/adapters/aws/polling-job-signals.js';

const elapsed = async (work: Promise<unknown>) => {
  const started = performance.now();
  await work;
  return performance.now() - started;
};

describe('PollingJobSignals', () => {
  it('wakes a waiter when its poll interval has passed', async () => {
    expect(await elapsed(new PollingJobSignals().wait('job-1', 80))).toBeGreaterThanOrEqual(75);
  });

  it('wakes waiters in this process at once on notify, only those of that job', async () => {
    const signals = new PollingJobSignals();
    let otherWoke = false;
    void signals.wait('job-2', 5_000).then(() => (otherWoke = true));
    const waits = [signals.wait('job-1', 5_000), signals.wait('job-1', 5_000)];
    setTimeout(() => signals.notify('job-1'), 20);
    expect(await elapsed(Promise.all(waits))).toBeLessThan(1_000);
    expect(otherWoke).toBe(false);
    signals.notify('job-2');
  });
});
