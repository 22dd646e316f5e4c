/**
 * The tables `npm run bench` prints for the sync webhooks and flows (bench/sync-webhook.ts): ratios
 * to the floor first, absolute figures second, the load span of each measurement, and last the
 * targets, each met or not: those near the floor (ratios to it) and the job runtime's (with the
 * network boundary on). Pure: figures in, lines out.
 */
import { showLoad, type LoadSpan } from './load-guard.js';
import type { FlowFigures } from './flows.js';

export interface Figures {
  p50: number;
  p99: number;
  rps: number;
}

export interface ScriptRow {
  name: string;
  svc: Figures;
  floor: Figures;
  svcLoad: LoadSpan;
  floorLoad: LoadSpan;
}

export type FlowRow = FlowFigures & { load: LoadSpan };

export interface Target {
  /** Which set the target belongs to. */
  goal: 'near the floor' | 'job runtime';
  target: string;
  row: string;
  value: string;
  met: boolean;
}

/** The script row whose warm sync p50 a flow language's per-step overhead is compared with. */
const SCRIPT_OF_FLOW_LANGUAGE: Record<string, string> = { bun: 'typescript', python3: 'python' };

const ms = (n: number) => n.toFixed(2);
const times = (n: number) => `${n.toFixed(2)}x`;

export function perStep(flowRows: FlowRow[], language: string, steps: number): number | undefined {
  const one = flowRows.find((r) => r.language === language && r.steps === 1);
  const row = flowRows.find((r) => r.language === language && r.steps === steps);
  return one && row && steps > 1 ? (row.median - one.median) / (steps - 1) : undefined;
}

export function targets(rows: ScriptRow[], flowRows: FlowRow[], concurrency: number): Target[] {
  const list: Target[] = [];
  for (const { name, svc, floor } of rows.filter((row) => row.name === 'typescript' || row.name === 'python')) {
    const p50 = svc.p50 / floor.p50;
    const rps = svc.rps / floor.rps;
    list.push({ goal: 'near the floor', target: 'sync p50 <= 2x the floor', row: name, value: `${times(p50)} (${ms(svc.p50)} / ${ms(floor.p50)} ms)`, met: p50 <= 2 });
    list.push({ goal: 'job runtime', target: 'sync p50 <= 3x the floor', row: name, value: times(p50), met: p50 <= 3 });
    list.push({ goal: 'near the floor', target: `sync runs/s at ${concurrency} clients >= 0.25x the floor`, row: name, value: `${times(rps)} (${svc.rps.toFixed(0)} / ${floor.rps.toFixed(0)})`, met: rps >= 0.25 });
    list.push({ goal: 'job runtime', target: `sync runs/s at ${concurrency} clients >= 1,500`, row: name, value: svc.rps.toFixed(0), met: svc.rps >= 1500 });
  }
  for (const language of [...new Set(flowRows.map((r) => r.language))]) {
    const sync = rows.find((row) => row.name === SCRIPT_OF_FLOW_LANGUAGE[language]);
    for (const steps of [10, 40]) {
      const overhead = perStep(flowRows, language, steps);
      if (overhead === undefined) continue;
      const row = `${steps} ${language} steps`;
      if (sync) {
        const ratio = overhead / sync.svc.p50;
        list.push({ goal: 'near the floor', target: 'per-step overhead <= 1.2x a warm sync p50', row, value: `${times(ratio)} (${ms(overhead)} / ${ms(sync.svc.p50)} ms)`, met: ratio <= 1.2 });
      }
      list.push({ goal: 'job runtime', target: 'per-step overhead <= 2 ms', row, value: `${ms(overhead)} ms`, met: overhead <= 2 });
    }
  }
  const typescript = rows.find((row) => row.name === 'typescript');
  for (const other of rows.filter((row) => typescript && (row.name === 'go' || row.name === 'deno'))) {
    const ratio = other.svc.p50 / typescript!.svc.p50;
    list.push({ goal: 'near the floor', target: "warm sync p50 <= 3x TypeScript's", row: other.name, value: `${times(ratio)} (${ms(other.svc.p50)} / ${ms(typescript!.svc.p50)} ms)`, met: ratio <= 3 });
  }
  return list;
}

export function reportLines(rows: ScriptRow[], flowRows: FlowRow[], { concurrency, flowRuns }: { concurrency: number; flowRuns: number }): string[] {
  const lines = ['load: the 1-minute load average at the start→end of each measurement\n'];
  lines.push('| script | p50 vs floor | runs/s vs floor | svc p50 ms | svc p99 ms | svc runs/s | floor p50 ms | floor p99 ms | floor runs/s | load, svc | load, floor |');
  lines.push('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const { name, svc, floor, svcLoad, floorLoad } of rows) {
    const cells = [name, times(svc.p50 / floor.p50), times(svc.rps / floor.rps), ms(svc.p50), ms(svc.p99), svc.rps.toFixed(0), ms(floor.p50), ms(floor.p99), floor.rps.toFixed(0), showLoad(svcLoad), showLoad(floorLoad)];
    lines.push(`| ${cells.join(' | ')} |`);
  }
  if (flowRows.length > 0) {
    lines.push(`\nflows of N light steps, sequential runs through the sync endpoint (median of ${flowRuns}); per-step overhead = (flow - 1-step flow) / (N - 1); vs sync p50 = per-step overhead / the same language's warm sync p50 above\n`);
    lines.push('| steps | language | per-step overhead vs sync p50 | flow median ms | per-step overhead ms | load |');
    lines.push('|---|---|---|---|---|---|');
    for (const row of flowRows) {
      const overhead = perStep(flowRows, row.language, row.steps);
      const sync = rows.find((r) => r.name === SCRIPT_OF_FLOW_LANGUAGE[row.language]);
      const ratio = overhead !== undefined && sync ? times(overhead / sync.svc.p50) : '—';
      lines.push(`| ${row.steps} | ${row.language} | ${ratio} | ${ms(row.median)} | ${overhead === undefined ? '—' : ms(overhead)} | ${showLoad(row.load)} |`);
    }
  }
  const list = targets(rows, flowRows, concurrency);
  lines.push('\ntargets near the floor and of the job runtime (network boundary on), this run\n');
  lines.push('| goal | target | row | value | met |');
  lines.push('|---|---|---|---|---|');
  for (const t of list) lines.push(`| ${t.goal} | ${t.target} | ${t.row} | ${t.value} | ${t.met ? 'yes' : 'no'} |`);
  lines.push(`\n${list.filter((t) => t.met).length} of ${list.length} targets met`);
  return lines;
}
