/**
 * Flows of 1, 10 and 40 light steps, timed end to end through the sync route. `measureFlow` is
 * what `npm run bench` (sync-webhook.ts) uses; run alone, this file compares settings side by side
 * in one run, alternating, since the shared machine's load moves figures between runs:
 *
 *   npm run bench:flows                                   # this service as configured
 *   npm run bench:flows -- "SVC_WARM_MAX_TOTAL=32 SVC_WARM_MEMORY_MB=1000000" ""   # before / after
 *
 * Each argument is one variant: environment settings for the service, `""` for none;
 * `CHECKOUT=<dir>` runs another built checkout's service instead (main's code, say).
 * BENCH_FLOW_ROUNDS (default 2) says how often the variants take turns.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { exitOnBenchError, measureQuietly } from './load-guard.js';

const ROOT = resolve(import.meta.dirname, '..');
const TOKEN = 'bench-flows-admin-token';
/** Timed runs per flow: a median of more runs moves less with the few that the machine slowed. */
export const FLOW_RUNS = Number(process.env.BENCH_FLOW_RUNS ?? 21);
/** How long each flow is run before it is timed, at least and per step (see timeFlow). */
export const FLOW_WARM_MS = Number(process.env.BENCH_FLOW_WARM_MS ?? 1000);
export const FLOW_WARM_MS_PER_STEP = Number(process.env.BENCH_FLOW_WARM_MS_PER_STEP ?? 250);
const ROUNDS = Number(process.env.BENCH_FLOW_ROUNDS ?? 2);
/** BENCH_FLOW_STEPS=1,10 measures fewer flows (1 is always measured: the overhead is relative to it). */
export const FLOW_STEPS = (process.env.BENCH_FLOW_STEPS ?? '1,10,40').split(',').map(Number);
export const FLOW_LANGUAGES = ['bun', 'python3'] as const;
/** BENCH_FLOW_LOOPS=10,200: sequential loops over that many items, each figure per iteration ("" measures none). */
export const FLOW_LOOPS = (process.env.BENCH_FLOW_LOOPS ?? '10,200').split(',').filter(Boolean).map(Number);
/** BENCH_FLOW_LOOP_ITEM_BYTES=1000: each loop item is a record with a text of that many bytes, in the flow's input. */
const LOOP_ITEM_BYTES = Number(process.env.BENCH_FLOW_LOOP_ITEM_BYTES ?? 1000);
/** Timed runs per loop (each of many iterations). */
const LOOP_RUNS = Number(process.env.BENCH_FLOW_LOOP_RUNS ?? 7);
/** Whether every step of a flow gets the same code (one warm process for all of them), to see what a step's own process costs. */
const SAME_CODE = process.env.BENCH_FLOW_SAME_CODE === '1';

export interface FlowFigures {
  language: string;
  steps: number;
  median: number;
  /** The service's own CPU time per flow run (all its threads), when it was measured: unlike wall time, other load on the machine barely moves it. */
  serviceCpuMs?: number;
}

/** CPU time of every thread of `pid` so far, in ms, from /proc (Linux). */
export function cpuMsOf(pid: number): number {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // the thread ended meanwhile
    }
  }
  return ns / 1e6;
}

/** (flow of N steps - flow of 1 step) / (N - 1), from figures of one run. */
export function perStepOverhead(rows: FlowFigures[], language: string, steps: number): number {
  const one = rows.find((r) => r.language === language && r.steps === 1)!;
  const row = rows.find((r) => r.language === language && r.steps === steps)!;
  return (row.median - one.median) / (steps - 1);
}

/** A flow of `steps` trivial steps, each passing a counter on; timed end to end through the sync route. */
export async function measureFlow(base: string, auth: Record<string, string>, language: 'bun' | 'python3', steps: number, servicePid?: number): Promise<FlowFigures> {
  return timeFlow(base, auth, await createFlow(base, auth, language, steps), language, steps, servicePid);
}

/**
 * Sync runs of a 1-step flow of each language before any flow is timed, for at least
 * SERVICE_WARM_MS in all. Without them the first flow timed (the 1-step one, every per-step
 * overhead's baseline) ran on a service just started — its code not yet optimized by V8, its first
 * spares and job slots still starting — and came out 5-7 ms where it is ~4 ms later, which made
 * that language's per-step overhead look smaller. V8 takes thousands of calls to optimize the
 * service's request path (bench/warm-up.ts), hence seconds of runs rather than a few hundred.
 */
export const SERVICE_WARM_MS = Number(process.env.BENCH_SERVICE_WARM_MS ?? 10_000);

export async function warmService(base: string, auth: Record<string, string>): Promise<void> {
  for (const language of FLOW_LANGUAGES) {
    const path = await createFlow(base, auth, language, 1, 'bench_warmup');
    const until = performance.now() + SERVICE_WARM_MS / FLOW_LANGUAGES.length;
    do await runFlow(base, auth, path, 1);
    while (performance.now() < until);
  }
}

/** Creates the flow of `steps` trivial steps that timeFlow runs; answers its path. */
export async function createFlow(base: string, auth: Record<string, string>, language: 'bun' | 'python3', steps: number, name = 'bench_flow'): Promise<string> {
  // Each step its own code, as in a real flow: no two steps could share a process by content.
  // BENCH_FLOW_SAME_CODE=1 gives every step the same code, so all of them share one warm process.
  const step = (i: number) => (SAME_CODE ? 0 : i);
  const content = (i: number) => (language === 'bun' ? `export function main(n: number = 0) { return n + 1; } // step ${step(i)}` : `def main(n: int = 0):\n    return n + 1  # step ${step(i)}\n`);
  const modules = Array.from({ length: steps }, (_, i) => ({
    id: `s${i}`,
    value: { type: 'rawscript', language, content: content(i), input_transforms: i === 0 ? {} : { n: { type: 'javascript', expr: 'results.s' + (i - 1) } } },
  }));
  const path = `u/admin/${name}_${language}_${steps}`;
  const headers = { ...auth, 'content-type': 'application/json' };
  const created = await fetch(`${base}/api/w/main/flows/create`, { method: 'POST', headers, body: JSON.stringify({ path, summary: path, value: { modules } }) });
  if (created.status !== 201) throw new Error(`flow create failed: ${await created.text()}`);
  return path;
}

/** One sync run of the flow at `path`, checked to answer its number of steps. */
async function runFlow(base: string, auth: Record<string, string>, path: string, steps: number): Promise<void> {
  const response = await fetch(`${base}/api/w/main/jobs/run_wait_result/p/${path}`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{}' });
  const text = await response.text();
  if (text !== String(steps)) throw new Error(`flow ${path} answered ${response.status} ${text}`);
}

/** Sequential runs of the flow at `path` through the sync route: the median of FLOW_RUNS after FLOW_WARM_MS of warming runs. */
export async function timeFlow(base: string, auth: Record<string, string>, path: string, language: string, steps: number, servicePid?: number): Promise<FlowFigures> {
  const run = () => runFlow(base, auth, path, steps);
  // The first run starts the steps' processes; each takes a spare, whose replacement starts in the
  // background (a confined Node or Python start, ~0.1-0.3 s of CPU). Runs go on until those starts
  // are over before the timed runs: a 1-step flow's few timed runs (the baseline of every per-step
  // overhead) otherwise shared the machine with them and came out up to 3x slower. Every step has
  // code of its own, so a flow of 40 steps has 40 of them to wait out, not one: with a fixed second
  // its timed runs shared the machine with the last ~30 and its per-step overhead read ~15% higher
  // than in the runs that follow.
  const warmUntil = performance.now() + Math.max(FLOW_WARM_MS, steps * FLOW_WARM_MS_PER_STEP);
  do await run();
  while (performance.now() < warmUntil);
  const times: number[] = [];
  const cpuAtStart = servicePid === undefined ? 0 : cpuMsOf(servicePid);
  for (let i = 0; i < FLOW_RUNS; i++) {
    const t = performance.now();
    await run();
    times.push(performance.now() - t);
  }
  const serviceCpuMs = servicePid === undefined ? undefined : (cpuMsOf(servicePid) - cpuAtStart) / FLOW_RUNS;
  times.sort((a, b) => a - b);
  return { language, steps, median: times[Math.floor(times.length / 2)]!, serviceCpuMs };
}

/** Creates the sequential loop timeLoop runs (once: a measurement repeated for load runs it again); answers its path. */
async function createLoop(base: string, auth: Record<string, string>, items: number): Promise<string> {
  const path = `u/admin/bench_loop_${items}`;
  const modules = [
    {
      id: 'loop',
      value: {
        type: 'forloopflow',
        iterator: { type: 'javascript', expr: 'flow_input.items' },
        parallel: false,
        skip_failures: false,
        modules: [{ id: 'double', value: { type: 'rawscript', language: 'bun', content: 'export function main(x: number) { return x * 2; }', input_transforms: { x: { type: 'javascript', expr: 'flow_input.iter.value.i' } } } }],
      },
    },
  ];
  const created = await fetch(`${base}/api/w/main/flows/create`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ path, summary: path, value: { modules } }) });
  if (created.status !== 201) throw new Error(`flow create failed: ${await created.text()}`);
  return path;
}

/**
 * A sequential for loop over `items` records of the flow's input (each LOOP_ITEM_BYTES of text),
 * each iteration one TypeScript step, through the sync route: the median run's time and the
 * service's CPU, per iteration. An iteration is a flow job of its own plus its step, so it costs
 * more than a step; what matters is that it costs no more in a long loop than in a short one.
 */
async function timeLoop(base: string, auth: Record<string, string>, path: string, items: number, servicePid: number): Promise<FlowFigures> {
  const headers = { ...auth, 'content-type': 'application/json' };
  const body = JSON.stringify({ items: Array.from({ length: items }, (_, i) => ({ i, text: 'x'.repeat(LOOP_ITEM_BYTES) })) });
  const run = async () => {
    const response = await fetch(`${base}/api/w/main/jobs/run_wait_result/p/${path}`, { method: 'POST', headers, body });
    const out = (await response.json()) as unknown;
    if (!Array.isArray(out) || out.length !== items || out[items - 1] !== (items - 1) * 2) throw new Error(`loop ${path} answered ${response.status} ${JSON.stringify(out).slice(0, 200)}`);
  };
  await run();
  await run();
  const times: number[] = [];
  const cpuAtStart = cpuMsOf(servicePid);
  for (let i = 0; i < LOOP_RUNS; i++) {
    const t = performance.now();
    await run();
    times.push((performance.now() - t) / items);
  }
  times.sort((a, b) => a - b);
  return { language: 'loop', steps: items, median: times[Math.floor(times.length / 2)]!, serviceCpuMs: (cpuMsOf(servicePid) - cpuAtStart) / LOOP_RUNS / items };
}

/** The address a `svc serve` child process says it listens on, once it says so. */
export function listeningAddress(child: ChildProcess): Promise<string> {
  return new Promise<string>((ok, fail) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString('utf8');
      const match = /svc listening on (\S+)/.exec(out);
      if (match) ok(match[1]!);
    });
    child.once('exit', (code) => fail(new Error(`the service exited with ${code}: ${out}`)));
  });
}

/** Starts the built service (this checkout's or `CHECKOUT`'s) with `env` on a fresh data dir, measures every flow, stops it. */
async function measureVariant({ CHECKOUT, ...env }: Record<string, string>): Promise<FlowFigures[]> {
  const root = CHECKOUT ? resolve(CHECKOUT) : ROOT;
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-flows-'));
  const child = spawn(process.execPath, [join(root, 'bin/svc.js'), 'serve'], {
    cwd: root,
    env: { PATH: process.env.PATH!, HOME: process.env.HOME!, PORT: '0', SVC_DATA_DIR: dataDir, SVC_ADMIN_TOKEN: TOKEN, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const base = await listeningAddress(child);
    const rows: FlowFigures[] = [];
    const auth = { authorization: `Bearer ${TOKEN}` };
    await warmService(base, auth);
    for (const language of FLOW_LANGUAGES) {
      for (const steps of FLOW_STEPS) {
        const path = await createFlow(base, auth, language, steps);
        rows.push((await measureQuietly(`${steps} ${language} steps`, () => timeFlow(base, auth, path, language, steps, child.pid))).value);
      }
    }
    for (const items of FLOW_LOOPS) {
      const path = await createLoop(base, auth, items);
      rows.push((await measureQuietly(`loop of ${items} items`, () => timeLoop(base, auth, path, items, child.pid!))).value);
    }
    return rows;
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function parseVariant(text: string): Record<string, string> {
  return Object.fromEntries(
    text
      .split(/\s+/)
      .filter(Boolean)
      .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  );
}

async function main() {
  const variants = process.argv.length > 2 ? process.argv.slice(2) : [''];
  const results = variants.map(() => [] as FlowFigures[][]);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, variant] of variants.entries()) results[i]!.push(await measureVariant(parseVariant(variant)));
  }
  const show = (xs: number[], digits: number) => xs.map((x) => x.toFixed(digits)).join(' / ');
  console.log(`\nflows, sequential runs through the sync endpoint (median of ${FLOW_RUNS} per run; ${ROUNDS} rounds shown as run 1 / run 2 ...)\n`);
  console.log(`| measure | ${variants.map((v) => v || '(defaults)').join(' | ')} | target |`);
  console.log(`|---|${variants.map(() => '---|').join('')}---|`);
  for (const language of FLOW_LANGUAGES) {
    for (const steps of FLOW_STEPS.filter((n) => n > 1)) {
      const cells = results.map((runs) => `${show(runs.map((rows) => perStepOverhead(rows, language, steps)), 2)} ms`);
      console.log(`| per-step overhead, ${steps} ${language} steps | ${cells.join(' | ')} | <= 2 ms |`);
    }
  }
  for (const language of FLOW_LANGUAGES) {
    for (const steps of FLOW_STEPS) {
      const cells = results.map((runs) => `${show(runs.map((rows) => rows.find((r) => r.language === language && r.steps === steps)!.median), 1)} ms`);
      const target = language === 'python3' && steps === 40 ? '<= 500 ms' : '';
      console.log(`| ${steps} light ${language} steps, whole flow | ${cells.join(' | ')} | ${target} |`);
    }
  }
  for (const language of FLOW_LANGUAGES) {
    for (const steps of FLOW_STEPS) {
      const cells = results.map((runs) => `${show(runs.map((rows) => rows.find((r) => r.language === language && r.steps === steps)!.serviceCpuMs!), 1)} ms`);
      console.log(`| ${steps} light ${language} steps, service CPU per flow run | ${cells.join(' | ')} | |`);
    }
  }
  for (const items of FLOW_LOOPS) {
    const row = (rows: FlowFigures[]) => rows.find((r) => r.language === 'loop' && r.steps === items)!;
    const cells = results.map((runs) => `${show(runs.map((rows) => row(rows).median), 2)} ms, CPU ${show(runs.map((rows) => row(rows).serviceCpuMs!), 2)} ms`);
    console.log(`| sequential loop of ${items} TypeScript items, per iteration | ${cells.join(' | ')} | |`);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) main().catch(exitOnBenchError);
