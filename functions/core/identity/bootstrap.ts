import { issueToken } from './auth.js';
import { addCreatorAsAdmin } from '../workspace/workspaces.js';
import type { Clock, Store } from '../../ports.js';

export const ADMIN_USERNAME = 'admin';

export interface BootstrapOptions {
  /** SVC_ADMIN_TOKEN: accepted as the admin's token when set. */
  adminToken?: string;
  defaultWorkspaceId: string;
  /** The instance's signing key, from which the key of stored token digests is derived. */
  signingKey: Uint8Array;
}

/**
 * A first start on an empty store creates the admin and a workspace (`created`) and, unless
 * SVC_ADMIN_TOKEN is set, returns a fresh admin token to show once. Later starts create nothing;
 * an SVC_ADMIN_TOKEN is (re)registered each time.
 */
export async function bootstrapInstance(store: Store, clock: Clock, opts: BootstrapOptions): Promise<{ created: boolean; newAdminToken: string | null }> {
  const now = clock.now().toISOString();
  const tokens = { store, clock, signingKey: opts.signingKey };
  const fresh = (await store.listWorkspaces()).length === 0;
  await store.createUser({ username: ADMIN_USERNAME, email: 'admin@svc.local', is_admin: true, password_hash: null, created_at: now });
  const adminToken = { label: 'admin (bootstrap)', owner: ADMIN_USERNAME, kind: 'api' as const, workspace_id: null, scopes: null, expires_at: null };
  if (opts.adminToken) await issueToken(tokens, { ...adminToken, label: 'admin (SVC_ADMIN_TOKEN)' }, opts.adminToken);
  if (!fresh) return { created: false, newAdminToken: null };
  await store.createWorkspace({ id: opts.defaultWorkspaceId, name: opts.defaultWorkspaceId, created_at: now, object_storage_enabled: false });
  await addCreatorAsAdmin(store, clock, opts.defaultWorkspaceId, ADMIN_USERNAME);
  return { created: true, newAdminToken: opts.adminToken ? null : await issueToken(tokens, adminToken) };
}
