import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { startServer } from '../http/harness.js';
import { docFiles, read, ROOT } from '../unit/docs/markdown.js';
import { firstMissingOutput, parseDocPage, type DocBlock } from './doc-blocks.js';

/**
 * Doctests: the shell examples of the README and of each page of docs/ run as written, in order,
 * against a fresh local service (one per page, pages in parallel), in bash with `set -eu` (a
 * failing command or an unset variable stops the page; pipelines fail as an interactive shell's do, by their last command).
 * Each page gets what the README's tour tells a user to set up: `SVC` and `TOKEN` (the service's
 * URL and admin token, which the examples' placeholders http://127.0.0.1:8000 and `svc_0kV…` stand
 * for), `svc` on the PATH, `curl` and `jq`. curl runs with `--fail-with-body` (from a .curlrc), so
 * an example whose request answers 4xx or 5xx fails here. What an example's comments say it prints
 * must be in what it prints (test/docs/doc-blocks.ts has the rules). Blocks marked
 * `<!-- doctest: skip (why) -->` are counted as skipped tests, with their reason.
 */

const PLACEHOLDERS: [string, (env: { url: string; token: string }) => string][] = [
  ['http://127.0.0.1:8000', (env) => env.url],
  ['svc_0kV…', (env) => env.token],
  ['<admin token>', (env) => env.token],
];

const PAGE_TIMEOUT_MS = 120_000;

interface PageRun {
  page: string;
  block: DocBlock;
}

function blocksToRun(page: string, seen = new Set<string>()): PageRun[] {
  if (seen.has(page)) throw new Error(`doctest: pages that follow each other in a circle: ${[...seen].join(', ')}`);
  seen.add(page);
  const parsed = parseDocPage(read(page));
  return [...parsed.after.flatMap((previous) => blocksToRun(previous, seen)), ...parsed.blocks.map((block) => ({ page, block }))];
}

function marker(index: number): string {
  return `@@doctest-block ${index}@@`;
}

/** One bash script for the page: each block after a marker line on stdout and stderr. */
function scriptOf(runs: PageRun[], env: { url: string; token: string }): string {
  const parts = ['set -eu'];
  runs.forEach((run, index) => {
    if (run.block.skip) return;
    let code = run.block.code;
    for (const [placeholder, value] of PLACEHOLDERS) code = code.split(placeholder).join(value(env));
    parts.push(`printf '\\n%s\\n' '${marker(index)}'; printf '\\n%s\\n' '${marker(index)}' >&2`, code);
  });
  parts.push(`printf '\\n%s\\n' '${marker(runs.length)}'`);
  return parts.join('\n') + '\n';
}

function runBash(script: string, cwd: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolveRun, reject) => {
    const child = spawn('bash', ['-c', script], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], timeout: PAGE_TIMEOUT_MS });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolveRun({ code, stdout, stderr }));
  });
}

/** What each block printed, by its index (the text after its marker, up to the next one). */
function splitByBlock(text: string): Map<number, string> {
  const out = new Map<number, string>();
  const pieces = text.split(/\n@@doctest-block (\d+)@@\n/);
  for (let i = 1; i < pieces.length; i += 2) out.set(Number(pieces[i]), pieces[i + 1] ?? '');
  return out;
}

async function runPage(page: string): Promise<void> {
  const runs = blocksToRun(page);
  const work = mkdtempSync(join(tmpdir(), 'svc-doctest-'));
  const bin = join(work, '.bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'svc'), `#!/bin/sh\nexec "${process.execPath}" "${join(ROOT, 'bin/svc.js')}" "$@"\n`);
  chmodSync(join(bin, 'svc'), 0o755);
  writeFileSync(join(work, '.curlrc'), 'fail-with-body\nshow-error\n');
  const server = await startServer();
  try {
    const env = { url: server.url, token: server.token };
    const result = await runBash(scriptOf(runs, env), work, {
      PATH: `${bin}:${process.env.PATH}`,
      HOME: work,
      CURL_HOME: work,
      LANG: 'C.UTF-8',
      SVC: server.url,
      TOKEN: server.token,
    });
    const stdout = splitByBlock('\n' + result.stdout);
    const stderr = splitByBlock('\n' + result.stderr);
    for (const [index, run] of runs.entries()) {
      if (run.block.skip) continue;
      const where = `${run.page}:${run.block.line}`;
      const printed = stdout.get(index);
      const complaint = (what: string) =>
        `${where}: ${what}\n--- the block\n${run.block.code}\n--- its stdout\n${printed ?? ''}\n--- its stderr\n${stderr.get(index) ?? ''}\n--- server output (tail)\n${server.output().slice(-3000)}`;
      if (printed === undefined) throw new Error(complaint('did not run (an earlier block failed)'));
      if (!stdout.has(nextRunIndex(runs, index))) throw new Error(complaint(`failed (bash exit ${result.code})`));
      const missing = firstMissingOutput(printed, run.block.outputs);
      if (missing !== undefined) throw new Error(complaint(`does not print what its comment says: ${missing}`));
    }
  } finally {
    await server.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

function nextRunIndex(runs: PageRun[], index: number): number {
  for (let next = index + 1; next < runs.length; next++) if (!runs[next].block.skip) return next;
  return runs.length;
}

const pages = docFiles().filter((page) => parseDocPage(read(page)).blocks.length > 0);

describe.concurrent('the docs run as written', () => {
  for (const page of pages) {
    const blocks = parseDocPage(read(page)).blocks;
    if (blocks.some((block) => !block.skip)) test(page, () => runPage(page), PAGE_TIMEOUT_MS + 30_000);
    for (const block of blocks.filter((b) => b.skip)) test.skip(`${page}:${block.line} (${block.skip})`, () => {});
  }
  test('every annotation names a page that exists', () => {
    for (const page of pages) for (const previous of parseDocPage(read(page)).after) expect(docFiles()).toContain(previous);
  });
});
