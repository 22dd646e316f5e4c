import { getEntityValue, tryCreateEntity, updateEntity } from '../store/entities.js';
import { jobLimitsSetting, type JobLimitsSetting } from '../documents/entity-values.js';
import { parseBody } from '../common/validation.js';
import type { Rights } from '../identity/permissions.js';
import type { CoreDeps } from '../deps.js';
import type { JobResourceLimits, Store } from '../../ports.js';

const KEY = 'limits';
const WHAT = 'the workspace job limits';

export async function getJobLimits(store: Store, workspaceId: string): Promise<JobLimitsSetting> {
  return (await getEntityValue(store, 'job_limits', workspaceId, KEY)) ?? {};
}

/** Replaces the workspace's limits with the body (`{}` clears them); workspace admins only. */
export async function setJobLimits(deps: Pick<CoreDeps, 'store' | 'clock'>, rights: Rights, body: unknown): Promise<JobLimitsSetting> {
  rights.check('workspaces', 'write');
  const input = parseBody(jobLimitsSetting, body);
  const workspaceId = rights.workspaceId;
  if (await tryCreateEntity(deps.store, deps.clock, 'job_limits', workspaceId, KEY, input)) return input;
  return (await updateEntity(deps.store, deps.clock, 'job_limits', workspaceId, KEY, WHAT, () => input)).value;
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
    ...(setting.disk_mb ? { diskBytes: setting.disk_mb * MiB } : {}),
  };
  return Object.keys(limits).length > 0 ? limits : undefined;
}
