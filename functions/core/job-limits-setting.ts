import { z } from 'zod';
import { createEntity, getEntityValue, updateEntity } from './entities.js';
import { ApiError } from './errors.js';
import { parseBody } from './validation.js';
import type { Rights } from './permissions.js';
import type { CoreDeps } from './deps.js';
import type { JobResourceLimits, Store } from '../ports.js';

/**
 * A workspace's own job limits (README: Job confinement). Each may lower the instance's limit,
 * never raise it: the runtime takes the lower of the two. Absent fields follow the instance.
 */
export interface JobLimitsSetting {
  memory_mb?: number;
  max_processes?: number;
  cpu_seconds?: number;
  file_mb?: number;
  open_files?: number;
}

const positive = z.number().int().positive().max(2 ** 31);
const limitsBody = z
  .object({ memory_mb: positive, max_processes: positive, cpu_seconds: positive, file_mb: positive, open_files: positive })
  .partial()
  .strict();

const KEY = 'limits';
const WHAT = 'the workspace job limits';

export async function getJobLimits(store: Store, workspaceId: string): Promise<JobLimitsSetting> {
  return (await getEntityValue<JobLimitsSetting>(store, 'job_limits', workspaceId, KEY)) ?? {};
}

/** Replaces the workspace's limits with the body (`{}` clears them); workspace admins only. */
export async function setJobLimits(deps: Pick<CoreDeps, 'store' | 'clock'>, rights: Rights, body: unknown): Promise<JobLimitsSetting> {
  rights.check('workspaces', 'write');
  const input: JobLimitsSetting = parseBody(limitsBody, body);
  const workspaceId = rights.workspaceId;
  for (;;) {
    if (await getEntityValue(deps.store, 'job_limits', workspaceId, KEY)) {
      return (await updateEntity<JobLimitsSetting>(deps.store, deps.clock, 'job_limits', workspaceId, KEY, WHAT, () => input)).value;
    }
    try {
      return (await createEntity(deps.store, deps.clock, 'job_limits', workspaceId, KEY, input, WHAT)).value;
    } catch (error) {
      // Created by someone else meanwhile: replace theirs on the next turn.
      if (!(error instanceof ApiError) || error.status !== 409) throw error;
    }
  }
}

/** The setting as the runner takes it. */
export function runLimitsOf(setting: JobLimitsSetting): JobResourceLimits | undefined {
  const MiB = 1024 * 1024;
  const limits: JobResourceLimits = {
    ...(setting.memory_mb ? { memoryBytes: setting.memory_mb * MiB } : {}),
    ...(setting.max_processes ? { processes: setting.max_processes } : {}),
    ...(setting.cpu_seconds ? { cpuSeconds: setting.cpu_seconds } : {}),
    ...(setting.file_mb ? { fileBytes: setting.file_mb * MiB } : {}),
    ...(setting.open_files ? { openFiles: setting.open_files } : {}),
  };
  return Object.keys(limits).length > 0 ? limits : undefined;
}
