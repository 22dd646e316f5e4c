import { describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * The one-machine AWS shell starts a JVM (DynamoDB Local), a worker process and sandboxes: none of
 * them may outlive it, whether it is stopped or the process that started it dies.
 */

const SERVER = resolve(import.meta.dirname, 'aws-shell-server.ts');

describe('the AWS shell server', () => {
  it('stops every process it started on SIGTERM', async () => {
    const server = spawn(process.execPath, ['--import', 'tsx', SERVER], { env: serverEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    await listening(server);
    const started = descendants(server.pid!);
    expect(started.map(commandLine).join('\n')).toMatch(/DynamoDBLocal[\s\S]*sqs-event-source|sqs-event-source[\s\S]*DynamoDBLocal/);

    const exited = new Promise((r) => server.once('exit', r));
    server.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(await allGone(started)).toBe(true);
  }, 90_000);

  it('stops every process it started when the process that started it dies', async () => {
    // A parent that dies without a word, like a killed test worker (`:` keeps sh from exec'ing).
    const parent = spawn('sh', ['-c', `"${process.execPath}" --import tsx "${SERVER}"; :`], { env: serverEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    await listening(parent);
    const [server] = descendants(parent.pid!);
    const started = [server, ...descendants(server)];

    parent.kill('SIGKILL');
    expect(await allGone(started)).toBe(true);
  }, 90_000);
});

function serverEnv(): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, ...(process.env.TMPDIR ? { TMPDIR: process.env.TMPDIR } : {}), PORT: '0', SVC_ADMIN_TOKEN: 'lifecycle-test' };
}

async function listening(child: ChildProcess): Promise<void> {
  let out = '';
  await new Promise<void>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`no listening line:\n${out}`)), 80_000);
    const check = (chunk: Buffer) => {
      out += chunk;
      if (/svc listening on http:\/\/127\.0\.0\.1:\d+/.test(out)) {
        clearTimeout(timer);
        done();
      }
    };
    child.stdout!.on('data', check);
    child.stderr!.on('data', (chunk: Buffer) => (out += chunk));
    child.once('exit', (code) => fail(new Error(`exited with ${code}:\n${out}`)));
  });
}

/** Every live process below `pid`, from /proc. */
function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    const parent = Number(stat(Number(entry))?.[1]);
    if (!Number.isInteger(Number(entry)) || !parent) continue;
    children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
  }
  const found: number[] = [];
  const visit = (p: number) => {
    for (const child of children.get(p) ?? []) {
      found.push(child);
      visit(child);
    }
  };
  visit(pid);
  return found;
}

/** State and parent pid of a process, or null when it is gone. */
function stat(pid: number): [string, string] | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return [fields[0], fields[1]];
  } catch {
    return null;
  }
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

/** Gone, or a zombie left for init to reap: either way no longer running. */
async function allGone(pids: number[]): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    if (pids.every((pid) => [undefined, 'Z'].includes(stat(pid)?.[0]))) return true;
    await sleep(100);
  }
  console.error('still running:', pids.filter((pid) => stat(pid)?.[0] !== 'Z').map(commandLine));
  return false;
}
