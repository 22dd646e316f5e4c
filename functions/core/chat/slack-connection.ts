import { ApiError, badRequest } from '../errors.js';
import type { Rights } from '../permissions.js';
import type { CoreDeps } from '../deps.js';
import { readChatConnectionFields } from './chat-connection.js';

/**
 * A `slack` connection (README: Chat approvals): the bot token that calls the Web API, the signing
 * secret that proves an interaction came from Slack, and the API's base URL (Slack's own unless
 * a test points it at a fake). Read with the identity of whoever acts (the job that asks, or the
 * run's own identity when Slack calls back), with its `$var:` references resolved, so a secret
 * variable stays readable only by those who may read it. Its values are never logged or shown.
 */

export interface SlackConnection {
  path: string;
  botToken: string;
  signingSecret: string;
  apiUrl: string;
}

export const SLACK_API_URL = 'https://slack.com/api';

export async function readSlackConnection(deps: Pick<CoreDeps, 'store' | 'cipher'>, rights: Rights, path: string): Promise<SlackConnection> {
  const v = await readChatConnectionFields(deps, rights, path, 'slack', (actual) =>
    badRequest('invalid_request', `chat_resource_path: ${path} is a ${actual} connection, not a slack one`, { field: 'chat_resource_path' }),
  );
  const botToken = v.bot_token;
  const signingSecret = v.signing_secret;
  const apiUrl = v.api_url ?? SLACK_API_URL;
  if (typeof botToken !== 'string' || !botToken || typeof signingSecret !== 'string' || !signingSecret || typeof apiUrl !== 'string') {
    throw new ApiError(400, 'invalid_resource', `connection ${path} needs string fields bot_token and signing_secret (and api_url, if given)`);
  }
  return { path, botToken, signingSecret, apiUrl: apiUrl.replace(/\/+$/, '') };
}
