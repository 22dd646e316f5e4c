/**
 * First run of a new script version with and without spare processes (SVC_WARM_SPARES), on the
 * runner alone: `npx tsx bench/new-version-first-run.ts`. Printed, never asserted.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalRunner } from '../functions/runtime/index.js';
import type { Language, RunRequest } from '../functions/ports.js';

const hooks = { onLog: () => undefined, onStream: () => undefined };
const req = (language: Language, hash: string): RunRequest => ({
  jobId: 'j', workspaceId: 'ws', language, scriptHash: hash,
  content: language === 'python3' ? 'def main():\n    return 1\n' : 'export function main() { return 1; }',
  args: {}, schema: { type: 'object', properties: {}, required: [] }, env: { OV_USERNAME: 'u' }, timeoutMs: 10_000, maxOutputBytes: 1_000_000,
});
for (const language of ['python3', 'nativets'] as const) {
  for (const spares of [0, 2]) {
    const workDir = mkdtempSync(join(tmpdir(), 'svc-first-run-'));
    const runner = createLocalRunner({ workDir, sparesPerKey: spares });
    const times: number[] = [];
    for (let i = 0; i < 8; i++) {
      await new Promise((r) => setTimeout(r, 400)); // the spare's start, between jobs
      const t = performance.now();
      const out = await runner.run(req(language, `v${i}`), hooks, new AbortController().signal);
      if (!out.ok) throw new Error(JSON.stringify(out.error));
      times.push(performance.now() - t);
    }
    await runner.close();
    rmSync(workDir, { recursive: true, force: true });
    times.sort((a, b) => a - b);
    console.log(`${language} spares=${spares}: first run of a new version median ${times[4]!.toFixed(1)} ms (min ${times[0]!.toFixed(1)}, max ${times[7]!.toFixed(1)})`);
  }
}
