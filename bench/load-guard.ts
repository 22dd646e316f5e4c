/**
 * The benchmarks' load guard: a figure taken while the machine's load changed under it says more
 * about the machine than about svc. Each measurement records the 1-minute load average
 * (os.loadavg) at its start and end; one whose load moved by more than LOAD_MOVE_LIMIT is not
 * reported but repeated, up to a bounded number of tries, after which the bench says it could not
 * get a quiet measurement and fails.
 */
import { loadavg } from 'node:os';

/** The 1-minute load average when a measurement started and when it ended. */
export interface LoadSpan {
  start: number;
  end: number;
}

/** How far the load may move during one measurement for its figures to be reported. */
export const LOAD_MOVE_LIMIT = 1;
/** How often a measurement is tried before the bench gives up (BENCH_LOAD_TRIES). */
export const DEFAULT_LOAD_TRIES = 3;

export function loadMoved(span: LoadSpan, limit = LOAD_MOVE_LIMIT): boolean {
  return Math.abs(span.end - span.start) > limit;
}

export function showLoad(span: LoadSpan): string {
  return `${span.start.toFixed(2)}→${span.end.toFixed(2)}`;
}

export type Verdict = { kind: 'report' } | { kind: 'repeat'; message: string } | { kind: 'give up'; message: string };

/**
 * What to do with the figures of a measurement's `attempt`-th try (1-based) out of `tries`:
 * report them when the load held still, otherwise repeat, or give up after the last try.
 */
export function judgeMeasurement(label: string, span: LoadSpan, attempt: number, tries: number): Verdict {
  if (!loadMoved(span)) return { kind: 'report' };
  const moved = `the load moved ${showLoad(span)} (more than ${LOAD_MOVE_LIMIT}) during ${label}`;
  if (attempt >= tries) return { kind: 'give up', message: `could not get a quiet measurement of ${label}: ${moved}, try ${attempt} of ${tries}` };
  return { kind: 'repeat', message: `not reported: ${moved}, try ${attempt} of ${tries}; measuring it again` };
}

export class NoQuietMeasurement extends Error {}

export interface GuardOptions {
  tries?: number;
  /** The 1-minute load average now; os.loadavg by default. */
  readLoad?: () => number;
  log?: (line: string) => void;
}

export function loadTries(env: NodeJS.ProcessEnv = process.env): number {
  const tries = Number(env.BENCH_LOAD_TRIES ?? DEFAULT_LOAD_TRIES);
  return Number.isInteger(tries) && tries >= 1 ? tries : DEFAULT_LOAD_TRIES;
}

/**
 * Runs `measure` until the load holds still during one try and returns that try's figures with its
 * load span; throws NoQuietMeasurement when no try of `tries` was quiet.
 */
export async function measureQuietly<T>(label: string, measure: () => Promise<T>, options: GuardOptions = {}): Promise<{ value: T; load: LoadSpan }> {
  const tries = options.tries ?? loadTries();
  const readLoad = options.readLoad ?? (() => loadavg()[0]!);
  const log = options.log ?? ((line: string) => console.error(line));
  for (let attempt = 1; ; attempt++) {
    const start = readLoad();
    const value = await measure();
    const load = { start, end: readLoad() };
    const verdict = judgeMeasurement(label, load, attempt, tries);
    if (verdict.kind === 'report') return { value, load };
    log(verdict.message);
    if (verdict.kind === 'give up') throw new NoQuietMeasurement(verdict.message);
  }
}

/** The bench's exit on failure: a clear line for a machine that never held still, the stack otherwise. */
export function exitOnBenchError(error: unknown): never {
  console.error(error instanceof NoQuietMeasurement ? `bench failed: ${error.message}` : error);
  process.exit(1);
}
