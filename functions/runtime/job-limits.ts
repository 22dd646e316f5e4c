/** What one sandboxed process (a bash job, or a warm process with the job it serves) may use. */
export interface ResourceLimits {
  memoryBytes: number;
  processes: number;
  cpuSeconds: number;
  fileBytes: number;
  openFiles: number;
  /** Everything the process writes (its directories, /tmp, /dev/shm): its tmpfs's size. */
  diskBytes: number;
}

const MiB = 1024 * 1024;

/** The defaults the README lists; each can be changed per instance (env) and lowered per workspace. */
export const DEFAULT_LIMITS: ResourceLimits = {
  memoryBytes: 512 * MiB,
  processes: 256,
  cpuSeconds: 900,
  fileBytes: 1024 * MiB,
  openFiles: 1024,
  diskBytes: 1024 * MiB,
};

/** The instance's limits from `SVC_JOB_*` variables (README: "Job confinement"). */
export function limitsFromEnv(env: NodeJS.ProcessEnv): ResourceLimits {
  return {
    memoryBytes: positive(env.SVC_JOB_MEMORY_MB, DEFAULT_LIMITS.memoryBytes / MiB, 'SVC_JOB_MEMORY_MB') * MiB,
    processes: positive(env.SVC_JOB_MAX_PROCESSES, DEFAULT_LIMITS.processes, 'SVC_JOB_MAX_PROCESSES'),
    cpuSeconds: positive(env.SVC_JOB_CPU_SECONDS, DEFAULT_LIMITS.cpuSeconds, 'SVC_JOB_CPU_SECONDS'),
    fileBytes: positive(env.SVC_JOB_FILE_MB, DEFAULT_LIMITS.fileBytes / MiB, 'SVC_JOB_FILE_MB') * MiB,
    openFiles: positive(env.SVC_JOB_OPEN_FILES, DEFAULT_LIMITS.openFiles, 'SVC_JOB_OPEN_FILES'),
    diskBytes: positive(env.SVC_JOB_DISK_MB, DEFAULT_LIMITS.diskBytes / MiB, 'SVC_JOB_DISK_MB') * MiB,
  };
}

/** The uid range jobs run in, `first-last` (default 200000-200999): one uid per running process. */
export function uidRangeFromEnv(env: NodeJS.ProcessEnv): { first: number; count: number } {
  const text = env.SVC_JOB_UID_RANGE || '200000-200999';
  const match = /^(\d+)-(\d+)$/.exec(text);
  const first = Number(match?.[1]);
  const last = Number(match?.[2]);
  if (!match || first < 1000 || last < first || last > 2 ** 31) {
    throw new Error(`SVC_JOB_UID_RANGE must look like 200000-200999 (uids from 1000 up), got ${JSON.stringify(text)}`);
  }
  return { first, count: last - first + 1 };
}

export function formatBytes(bytes: number): string {
  return bytes % (1024 * MiB) === 0 ? `${bytes / (1024 * MiB)} GiB` : `${Math.round(bytes / MiB)} MiB`;
}

function positive(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer, got ${JSON.stringify(value)}`);
  return n;
}
