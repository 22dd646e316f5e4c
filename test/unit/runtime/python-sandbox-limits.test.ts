import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The per-process limits the Python sandbox Lambda gives a job's process (one_shot_job.py), from
 * the request's workspace limits and the function's SVC_JOB_* settings.
 */
const HANDLER_DIR = resolve(import.meta.dirname, '../../../functions/handlers/sandbox-python');
const MiB = 1024 * 1024;

function limitsFor(requestLimits: Record<string, number> | undefined, env: Record<string, string> = {}): Record<string, number> {
  const script = ['import json, sys', 'sys.path.insert(0, sys.argv[1])', 'from one_shot_job import process_limits', 'print(json.dumps(process_limits(json.loads(sys.argv[2]))))'].join('\n');
  const request = requestLimits === undefined ? {} : { limits: requestLimits };
  return JSON.parse(execFileSync('python3', ['-B', '-c', script, HANDLER_DIR, JSON.stringify(request)], { env: { PATH: process.env.PATH, ...env }, encoding: 'utf8' }));
}

describe("the Python sandbox's job limits", () => {
  it("takes the instance's defaults, or its SVC_JOB_* settings, when the workspace sets none", () => {
    expect(limitsFor(undefined)).toEqual({ cpuSeconds: 900, fileBytes: 1024 * MiB, openFiles: 1024 });
    expect(limitsFor({}, { SVC_JOB_CPU_SECONDS: '60', SVC_JOB_FILE_MB: '10', SVC_JOB_OPEN_FILES: '256' })).toEqual({ cpuSeconds: 60, fileBytes: 10 * MiB, openFiles: 256 });
  });

  it("lets a workspace lower the instance's limits, never raise them", () => {
    const env = { SVC_JOB_CPU_SECONDS: '60', SVC_JOB_OPEN_FILES: '256' };
    expect(limitsFor({ cpuSeconds: 5, openFiles: 32 }, env)).toMatchObject({ cpuSeconds: 5, openFiles: 32 });
    expect(limitsFor({ cpuSeconds: 600, openFiles: 4096, fileBytes: 2048 * MiB }, env)).toEqual({ cpuSeconds: 60, fileBytes: 1024 * MiB, openFiles: 256 });
  });
});
