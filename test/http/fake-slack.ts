import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A fake Slack on loopback that speaks the Web API's wire format: POST /api/<method>, the bot
 * token as `Authorization: Bearer`, JSON bodies for write methods and form fields for users.info,
 * HTTP 200 with `{ok: true, ...}` or `{ok: false, error}`. It keeps the channels' messages (as
 * chat.postMessage and chat.update leave them), ephemeral messages and opened modals, and signs
 * interactions as Slack signs them (v0 HMAC-SHA256 of `v0:<timestamp>:<body>`).
 */

export interface SlackUser {
  id: string;
  name: string;
  email: string;
}

export interface SlackMessage {
  channel: string;
  ts: string;
  text: string;
  blocks: any[];
}

export interface FakeSlack {
  apiUrl: string;
  token: string;
  signingSecret: string;
  /** Every call, in order, as it arrived. */
  calls: { method: string; headers: IncomingHttpHeaders; body: string }[];
  messages: SlackMessage[];
  ephemerals: { channel: string; user: string; text: string }[];
  views: { trigger_id: string; view: any }[];
  /** Answers HTTP 500 to the next `count` calls of `method`. */
  failNext(method: string, count: number): void;
  /** A form-encoded interaction with `payload`, and the headers Slack signs it with. */
  interaction(payload: unknown, opts?: { secret?: string; timestamp?: number }): { body: string; headers: Record<string, string> };
  /** A click on a button of `message`, by `user`, as Slack posts it. */
  click(message: SlackMessage, actionId: 'svc_approve' | 'svc_reject', user: SlackUser): Record<string, unknown>;
  /** A submission of the last modal opened, with `values` as `{field: string}`. */
  submit(user: SlackUser, values: Record<string, string>): Record<string, unknown>;
  close(): Promise<void>;
}

export async function startFakeSlack(users: SlackUser[], channels: string[]): Promise<FakeSlack> {
  const token = `xoxb-test-${Math.random().toString(36).slice(2)}`;
  const signingSecret = `signing-${Math.random().toString(36).slice(2)}`;
  const calls: FakeSlack['calls'] = [];
  const messages: SlackMessage[] = [];
  const ephemerals: FakeSlack['ephemerals'] = [];
  const views: FakeSlack['views'] = [];
  const failures = new Map<string, number>();
  let clock = 1_700_000_000;

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const method = (req.url ?? '').replace(/^\/api\//, '');
      calls.push({ method, headers: req.headers, body });
      const reply = (answer: Record<string, unknown>, status = 200) => {
        res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
        res.end(JSON.stringify(answer));
      };
      const left = failures.get(method) ?? 0;
      if (left > 0) {
        failures.set(method, left - 1);
        return reply({ ok: false, error: 'internal_error' }, 500);
      }
      if (req.headers.authorization !== `Bearer ${token}`) return reply({ ok: false, error: 'invalid_auth' });
      const form = (req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded');
      const args: Record<string, any> = form ? Object.fromEntries(new URLSearchParams(body)) : safeJson(body);
      switch (method) {
        case 'chat.postMessage': {
          if (!channels.includes(args.channel)) return reply({ ok: false, error: 'channel_not_found' });
          const message = { channel: args.channel, ts: `${clock++}.000100`, text: args.text ?? '', blocks: args.blocks ?? [] };
          messages.push(message);
          return reply({ ok: true, channel: message.channel, ts: message.ts, message: { text: message.text, blocks: message.blocks } });
        }
        case 'chat.update': {
          const message = messages.find((m) => m.channel === args.channel && m.ts === args.ts);
          if (!message) return reply({ ok: false, error: 'message_not_found' });
          message.text = args.text ?? message.text;
          message.blocks = args.blocks ?? message.blocks;
          return reply({ ok: true, channel: message.channel, ts: message.ts, text: message.text });
        }
        case 'chat.postEphemeral':
          ephemerals.push({ channel: args.channel, user: args.user, text: args.text });
          return reply({ ok: true, message_ts: `${clock++}.000200` });
        case 'views.open':
          if (!args.trigger_id) return reply({ ok: false, error: 'invalid_trigger_id' });
          views.push({ trigger_id: args.trigger_id, view: args.view });
          return reply({ ok: true, view: { id: `V${views.length}`, ...args.view } });
        case 'users.info': {
          if (!form) return reply({ ok: false, error: 'invalid_arguments' });
          const user = users.find((u) => u.id === args.user);
          if (!user) return reply({ ok: false, error: 'user_not_found' });
          return reply({ ok: true, user: { id: user.id, name: user.name, deleted: false, is_bot: false, profile: { email: user.email, real_name: user.name } } });
        }
        default:
          return reply({ ok: false, error: 'unknown_method' });
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;

  return {
    apiUrl,
    token,
    signingSecret,
    calls,
    messages,
    ephemerals,
    views,
    failNext(method, count) {
      failures.set(method, count);
    },
    interaction(payload, opts = {}) {
      const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
      const timestamp = String(opts.timestamp ?? Math.floor(Date.now() / 1000));
      const signature = `v0=${createHmac('sha256', opts.secret ?? signingSecret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
      return { body, headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-slack-request-timestamp': timestamp, 'x-slack-signature': signature } };
    },
    click(message, actionId, user) {
      const button = message.blocks.flatMap((b: any) => b.elements ?? []).find((e: any) => e.action_id === actionId);
      return {
        type: 'block_actions',
        user: { id: user.id, username: user.name, name: user.name, team_id: 'T0001' },
        api_app_id: 'A0001',
        trigger_id: `${clock++}.trigger`,
        container: { type: 'message', message_ts: message.ts, channel_id: message.channel, is_ephemeral: false },
        channel: { id: message.channel, name: message.channel.toLowerCase() },
        message: { ts: message.ts, text: message.text, blocks: message.blocks },
        response_url: 'https://hooks.slack.com/actions/T0001/1/x',
        actions: [{ action_id: actionId, block_id: 'svc_decision', type: 'button', value: button?.value, action_ts: `${clock}.1` }],
      };
    },
    submit(user, values) {
      const view = views[views.length - 1].view;
      const state: Record<string, any> = {};
      for (const block of view.blocks.filter((b: any) => b.type === 'input')) {
        const v = values[block.block_id];
        const type = block.element.type;
        state[block.block_id] = {
          [block.element.action_id]:
            type === 'static_select' ? { type, selected_option: v === undefined ? null : { text: { type: 'plain_text', text: v }, value: v } } : { type, value: v ?? null },
        };
      }
      return {
        type: 'view_submission',
        user: { id: user.id, username: user.name, name: user.name, team_id: 'T0001' },
        api_app_id: 'A0001',
        trigger_id: `${clock++}.trigger`,
        view: { id: `V${views.length}`, type: 'modal', callback_id: view.callback_id, private_metadata: view.private_metadata, state: { values: state } },
      };
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

function safeJson(text: string): Record<string, any> {
  try {
    return JSON.parse(text);
  } catch {
    return {};
  }
}
