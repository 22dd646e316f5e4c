import { describe, expect, it } from 'vitest';
import { judgeMeasurement, loadMoved, loadTries, measureQuietly, NoQuietMeasurement } from '../../../bench/load-guard.js';

/** A load reader answering the given readings in order, as os.loadavg would at each call. */
function readings(...values: number[]): () => number {
  return () => {
    if (values.length === 0) throw new Error('read the load more often than expected');
    return values.shift()!;
  };
}

describe('the benchmarks load guard', () => {
  it('reports a measurement whose 1-minute load moved by at most 1, either way', () => {
    expect(loadMoved({ start: 0.5, end: 1.5 })).toBe(false);
    expect(loadMoved({ start: 2.4, end: 1.4 })).toBe(false);
    expect(loadMoved({ start: 0.5, end: 1.51 })).toBe(true);
    expect(loadMoved({ start: 3, end: 1.9 })).toBe(true);
  });

  it('repeats a measurement the load moved under, and gives up after the last try', () => {
    expect(judgeMeasurement('the floor', { start: 0.2, end: 0.9 }, 3, 3)).toEqual({ kind: 'report' });
    const repeat = judgeMeasurement('the floor', { start: 0.2, end: 1.4 }, 1, 3);
    expect(repeat.kind).toBe('repeat');
    expect(repeat.kind !== 'report' && repeat.message).toContain('0.20→1.40');
    const giveUp = judgeMeasurement('the floor', { start: 0.2, end: 1.4 }, 3, 3);
    expect(giveUp.kind).toBe('give up');
    expect(giveUp.kind !== 'report' && giveUp.message).toContain('could not get a quiet measurement of the floor');
  });

  it('returns the figures of the first quiet try with its load, saying which tries it dropped', async () => {
    const logged: string[] = [];
    let runs = 0;
    const result = await measureQuietly('svc', async () => ++runs, { tries: 3, readLoad: readings(0.1, 1.3, 1.3, 1.6), log: (line) => logged.push(line) });
    expect(result).toEqual({ value: 2, load: { start: 1.3, end: 1.6 } });
    expect(logged).toHaveLength(1);
    expect(logged[0]).toContain('not reported');
  });

  it('fails after a bounded number of tries when the load never holds still', async () => {
    const logged: string[] = [];
    let runs = 0;
    const attempt = measureQuietly('svc', async () => ++runs, { tries: 2, readLoad: readings(0, 2, 2, 0), log: (line) => logged.push(line) });
    await expect(attempt).rejects.toBeInstanceOf(NoQuietMeasurement);
    expect(runs).toBe(2);
    expect(logged.at(-1)).toContain('could not get a quiet measurement of svc');
  });

  it('takes its number of tries from BENCH_LOAD_TRIES, falling back to 3 for nonsense', () => {
    expect(loadTries({})).toBe(3);
    expect(loadTries({ BENCH_LOAD_TRIES: '5' })).toBe(5);
    expect(loadTries({ BENCH_LOAD_TRIES: '0' })).toBe(3);
    expect(loadTries({ BENCH_LOAD_TRIES: 'many' })).toBe(3);
  });
});
