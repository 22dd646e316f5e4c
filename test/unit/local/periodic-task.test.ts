import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startPeriodic } from '../../../functions/adapters/local/periodic-task.js';

/** A task whose runs end only when the test says so. */
function heldTask() {
  const releases: Array<() => void> = [];
  let started = 0;
  const task = () => {
    started += 1;
    return new Promise<void>((resolve) => releases.push(resolve));
  };
  return { task, started: () => started, finishRun: () => releases.shift()?.() };
}

describe('startPeriodic (the local shell housekeeping timer)', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('runs the task at once, then every period, never two runs at a time', async () => {
    const held = heldTask();
    const periodic = startPeriodic('test task', 1000, held.task);
    expect(held.started()).toBe(1);
    await vi.advanceTimersByTimeAsync(3000);
    expect(held.started()).toBe(1); // the first run is still going: the ticks are not stacked
    held.finishRun();
    await vi.advanceTimersByTimeAsync(1000);
    expect(held.started()).toBe(2);
    held.finishRun();
    await periodic.stop();
  });

  it('stop waits for the run in flight and no run starts after it', async () => {
    const held = heldTask();
    const periodic = startPeriodic('test task', 1000, held.task);
    let stopped = false;
    const stopping = periodic.stop().then(() => {
      stopped = true;
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(stopped).toBe(false);
    held.finishRun();
    await stopping;
    await vi.advanceTimersByTimeAsync(5000);
    expect(held.started()).toBe(1);
  });

  it('a failed run does not stop the next ones', async () => {
    let runs = 0;
    const periodic = startPeriodic('test task', 1000, async () => {
      runs += 1;
      if (runs === 1) throw new Error('first run fails');
    });
    await vi.advanceTimersByTimeAsync(1000);
    expect(runs).toBe(2);
    await periodic.stop();
  });
});
