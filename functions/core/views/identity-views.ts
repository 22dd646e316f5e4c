import { z } from 'zod';
import type { Same } from './same.js';
import { userFields } from '../documents/records.js';
import { ENTITY_VALUES } from '../documents/entity-values.js';
import type { listMyInvites } from '../identity/invites.js';
import type { listAudit } from '../identity/login-throttle.js';
import type { Invite, Member, OutboxEntry } from '../identity/identity-documents.js';
import type { TokenView as CoreTokenView } from '../identity/tokens.js';
import type { UserView as CoreUserView } from '../identity/users.js';

/**
 * Users and tokens as the API answers them, for the OpenAPI document and the CLI; the checks
 * below fail `npm run check` when the core's answers and these schemas part.
 */

/** `users/whoami`, `users/list` (each): a user without the password hash. */
export const userSchema = userFields.omit({ password_hash: true });
export type UserView = z.output<typeof userSchema>;

/** `users/tokens/list` (each): never the secret, only its prefix. */
export const tokenSchema = z.object({
  token_prefix: z.string(),
  label: z.string(),
  scopes: z.array(z.string()).nullable(),
  workspace_id: z.string().nullable(),
  expiration: z.string().nullable(),
  created_at: z.string(),
  expired: z.boolean(),
  expires_soon: z.boolean(),
  expiry_badge: z.enum(['expired', 'within_7_days', 'within_30_days']).nullable(),
});
export type TokenView = z.output<typeof tokenSchema>;

/** `users/list` (each) in a workspace, `add_user`, `users/update/{username}`, `accept_invite`: a membership. */
export const memberSchema = ENTITY_VALUES.member;
export type MemberView = z.output<typeof memberSchema>;
/** `workspaces/invite_user`, `list_pending_invites` (each). */
export const inviteSchema = ENTITY_VALUES.invite;
/** `users/list_invites` (each): an invitation waiting for the caller, with its workspace. */
export const myInviteSchema = z.intersection(inviteSchema, z.object({ workspace_id: z.string() }));

/** `POST /api/auth/login`: who signed in and when the session ends (the session itself is the cookie). */
export const loginSchema = z.object({ username: z.string(), expires_at: z.string() });
export type LoginView = z.output<typeof loginSchema>;
/** `users/notifications` (each): a notice that could not be mailed. */
export const noticeSchema = ENTITY_VALUES.notification;
/** `audit/list` (each): an event and when, with its own fields. */
export const auditEntrySchema = ENTITY_VALUES.audit;

const agree: [
  Same<UserView, CoreUserView>,
  Same<TokenView, CoreTokenView>,
  Same<MemberView, Member>,
  Same<z.output<typeof inviteSchema>, Invite>,
  Same<z.output<typeof myInviteSchema>, Awaited<ReturnType<typeof listMyInvites>>[number]>,
  Same<z.output<typeof noticeSchema>, OutboxEntry>,
  Same<z.output<typeof auditEntrySchema>, Awaited<ReturnType<typeof listAudit>>[number]>,
] = [true, true, true, true, true, true, true];
void agree;

const names = z.array(z.string());
/** `users/whoami` of a workspace, in Windmill's User shape. */
export const workspaceUserSchema = z.object({
  email: z.string(),
  username: z.string(),
  is_admin: z.boolean(),
  is_super_admin: z.boolean(),
  created_at: z.string(),
  operator: z.boolean(),
  disabled: z.boolean(),
  groups: names,
  folders: names,
  folders_read: names,
  folders_owners: names,
});
export type WorkspaceUserView = z.output<typeof workspaceUserSchema>;
