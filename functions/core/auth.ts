import { ApiError } from './errors.js';
import { sha256Hex, newSecret } from './crypto.js';
import { looksLikeJobToken, verifyJobToken } from './job-tokens.js';
import type { CoreDeps } from './deps.js';
import type { Clock, Store, TokenRecord } from '../ports.js';

/**
 * Who is calling, and whether they may do what they ask. Every route goes through
 * `authenticate` and `authorize`; nothing else in the service decides access.
 */

export interface Principal {
  username: string;
  /** An instance token reaches every workspace; a job token only its job's workspace. */
  workspaceId: string | null;
  jobId: string | null;
  isAdmin: boolean;
}

export type Action = 'workspace:create' | 'workspace:admin' | 'scripts:read' | 'scripts:write' | 'jobs:run' | 'jobs:read' | 'jobs:cancel';

const JOB_TOKEN_ACTIONS: ReadonlySet<Action> = new Set(['scripts:read', 'jobs:run', 'jobs:read']);

export function hashToken(token: string): string {
  return sha256Hex(`svc-token:${token}`);
}

const UNKNOWN_TOKEN = () => new ApiError(401, 'unauthorized', 'the token is unknown or expired');

export async function authenticate(deps: Pick<CoreDeps, 'store' | 'clock' | 'config'>, token: string | null): Promise<Principal> {
  if (!token) {
    throw new ApiError(401, 'unauthorized', 'a token is required: send "Authorization: Bearer <token>" or ?token=<token>');
  }
  if (looksLikeJobToken(token)) return authenticateJob(deps, token);
  const record = await deps.store.getToken(hashToken(token));
  if (!record || (record.expires_at !== null && Date.parse(record.expires_at) <= deps.clock.now().getTime())) {
    throw UNKNOWN_TOKEN();
  }
  return {
    username: record.owner,
    workspaceId: record.workspace_id,
    jobId: null,
    isAdmin: record.workspace_id === null,
  };
}

/** A job token acts for its job's creator, in its workspace, while the job runs. */
async function authenticateJob(deps: Pick<CoreDeps, 'store' | 'clock' | 'config'>, token: string): Promise<Principal> {
  const claims = await verifyJobToken(deps.config.signingKey, token, deps.clock.now());
  if (!claims) throw UNKNOWN_TOKEN();
  const job = await deps.store.getJob(claims.workspaceId, claims.jobId);
  if (!job || job.status !== 'running') throw UNKNOWN_TOKEN();
  return { username: claims.username, workspaceId: claims.workspaceId, jobId: claims.jobId, isAdmin: false };
}

export function authorize(principal: Principal, action: Action, workspaceId: string | null): void {
  if (principal.workspaceId !== null) {
    if (workspaceId !== principal.workspaceId || !JOB_TOKEN_ACTIONS.has(action)) {
      throw new ApiError(403, 'forbidden', `this token may not ${action.replace(':', ' ')} here`);
    }
    return;
  }
  if (!principal.isAdmin) throw new ApiError(403, 'forbidden', `not allowed to ${action.replace(':', ' ')}`);
}

/** Issues a token, storing only its hash; the value is returned once and never again. */
export async function issueToken(
  store: Store,
  clock: Clock,
  fields: Pick<TokenRecord, 'label' | 'owner' | 'workspace_id' | 'expires_at'>,
  value: string = `svc_${newSecret()}`,
): Promise<string> {
  await store.putToken({
    ...fields,
    token_hash: hashToken(value),
    prefix: value.slice(0, 10),
    created_at: clock.now().toISOString(),
  });
  return value;
}
