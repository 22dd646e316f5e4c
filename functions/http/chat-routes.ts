import { Hono } from 'hono';
import { requestSlackApproval } from '../core/chat/chat-approval-request.js';
import { handleSlackCallback } from '../core/chat/slack-callbacks.js';
import { requestTeamsApproval } from '../core/chat/teams-request.js';
import { handleTeamsCallback } from '../core/chat/teams-callbacks.js';
import { sendConversationMessage } from '../core/chat/teams-basic.js';
import { deleteChatConnection, listChatConnections, setChatConnection } from '../core/chat/chat-settings.js';
import type { CoreDeps } from '../core/deps.js';
import type { AppEnv } from './context.js';
import { readJsonBody } from './json-body.js';
import { requestText } from './request-text.js';

/**
 * Chat approvals (README: Chat approvals): the workspace's chat connections (admins set them up),
 * and the platforms' endpoints. `request_approval` is what the client libraries'
 * requestInteractiveChatApproval calls from inside a step, with the job's token (only that step's
 * own token, or a workspace admin as a person, may: core/chat/chat-requester.ts); `interactions`
 * is the Slack app's interactivity URL, authenticated by Slack's signature alone under a connected app's signing secret (app.ts lets it
 * through without a token), so it reads the raw body the signature covers. The Teams pair is the
 * same for requestInteractiveCollabApproval and the bot's messaging endpoint (a Bot Framework JWT).
 */
export function chatRoutes(deps: CoreDeps) {
  const r = new Hono<AppEnv>();

  // The workspace's chat connections, which a workspace admin sets up (README: Chat approvals).
  r.get('/workspaces/chat_connections', async (c) => c.json(await listChatConnections(deps, c.get('rights'))));
  r.post('/workspaces/chat_connections/:name', async (c) => c.json(await setChatConnection(deps, c.get('rights'), c.req.param('name'), await readJsonBody(c))));
  r.delete('/workspaces/chat_connections/:name', async (c) => {
    await deleteChatConnection(deps, c.get('rights'), c.req.param('name'));
    return c.text(`deleted chat connection ${c.req.param('name')}`);
  });

  r.post('/chat/slack/request_approval/:job', async (c) => c.json(await requestSlackApproval(deps, c.get('rights'), c.req.param('job'), await readJsonBody(c))));

  r.post('/chat/slack/interactions', async (c) => {
    const answer = await handleSlackCallback(deps, c.get('workspace').id, {
      signature: c.req.header('x-slack-signature'),
      timestamp: c.req.header('x-slack-request-timestamp'),
      rawBody: await requestText(c),
    });
    return answer.body ? c.json(answer.body, answer.status) : c.body(null, answer.status);
  });

  r.post('/chat/teams/request_approval/:job', async (c) => c.json(await requestTeamsApproval(deps, c.get('rights'), c.req.param('job'), await readJsonBody(c))));

  r.post('/chat/teams/send_message/:job', async (c) => c.json(await sendConversationMessage(deps, c.get('rights'), c.req.param('job'), await readJsonBody(c))));

  r.post('/chat/teams/messages', async (c) => {
    const answer = await handleTeamsCallback(deps, c.get('workspace').id, { authorization: c.req.header('authorization'), rawBody: await requestText(c) });
    return c.json(answer.body, answer.status);
  });

  return r;
}
