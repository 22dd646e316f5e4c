import { ApiError } from '../common/errors.js';
import { getEntityValue } from '../store/entities.js';
import { callSlack } from './slack-api.js';
import type { SlackConnection } from './chat-settings.js';
import type { ChatUser } from './step-decision.js';
import type { CoreDeps } from '../deps.js';

/**
 * Who clicked (README: Chat approvals, "Who may decide"): the chat user's email (Slack's
 * `users.info`, which needs `users:read.email`; the Teams connector's member record) names the svc
 * user with the same email, case aside. That user must be a member of the workspace; everything else the approval's own rules
 * decide. A Slack user with no email, or an email no svc user has, may not decide anything.
 */

export async function chatUser(deps: Pick<CoreDeps, 'store' | 'outbound'>, conn: SlackConnection, workspaceId: string, slackUserId: string): Promise<ChatUser> {
  const answer = await callSlack(deps, conn, 'users.info', { user: slackUserId }).catch((e: Error) => {
    throw new ApiError(403, 'unknown_user', `your Slack account could not be looked up (${e.message}), so it maps to no svc user`);
  });
  const user = (answer.user ?? {}) as { name?: unknown; deleted?: unknown; is_bot?: unknown; profile?: { email?: unknown } };
  const email = user.profile?.email;
  if (typeof email !== 'string' || !email || user.deleted === true || user.is_bot === true) {
    throw new ApiError(403, 'unknown_user', 'your Slack account shows no email, so it maps to no svc user (the app needs the users:read.email scope)');
  }
  return svcUserByEmail(deps, workspaceId, email, `@${typeof user.name === 'string' ? user.name : slackUserId}`);
}

/** The svc user with this email (case aside), who must be a member of the workspace (or an instance admin). */
export async function svcUserByEmail(deps: Pick<CoreDeps, 'store'>, workspaceId: string, email: string, handle: string): Promise<ChatUser> {
  const wanted = email.toLowerCase();
  const svcUser = (await deps.store.listUsers()).find((u) => u.email.toLowerCase() === wanted);
  if (!svcUser) throw new ApiError(403, 'unknown_user', `no svc user has the email ${email}`);
  const member = svcUser.is_admin || (await getEntityValue(deps.store, 'member', workspaceId, svcUser.username));
  if (!member) throw new ApiError(403, 'unknown_member', `${svcUser.username} is not a member of workspace ${workspaceId}`);
  return {
    principal: { username: svcUser.username, isSuperadmin: svcUser.is_admin, workspaceId, scopes: null, via: 'chat', jobId: null, tokenHash: null },
    email: svcUser.email,
    handle,
  };
}
