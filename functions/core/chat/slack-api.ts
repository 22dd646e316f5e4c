import { retry } from '../common/retry.js';
import type { CoreDeps } from '../deps.js';
import type { SlackConnection } from './chat-settings.js';

/**
 * Calls of the Slack Web API, through the instance's SSRF-guarded outbound client. Write methods
 * take JSON; read methods (`users.info`) take form fields, as Slack documents. The bot token goes
 * in the Authorization header only, never in a URL or a log line. Slack answers HTTP 200 with
 * `{ok: false, error}` for refusals (a wrong channel, a revoked token): those are final; a network
 * failure, a 5xx or a 429 is tried again with backoff.
 */

export class SlackApiError extends Error {
  constructor(
    readonly method: string,
    /** Slack's `error` code, or what went wrong on the way. */
    readonly reason: string,
    readonly retryable: boolean,
  ) {
    super(`Slack ${method} failed: ${reason}`);
    this.name = 'SlackApiError';
  }
}

const TIMEOUT_MS = 10_000;
/** Three attempts in all; the waits between them are jittered (core/common/retry.ts). */
const SLACK_RETRY = { attempts: 3, baseDelayMs: 250, maxDelayMs: 2000 };

export type SlackAnswer = Record<string, unknown> & { ok: true };

type ApiDeps = Pick<CoreDeps, 'outbound'>;

export async function callSlack(deps: ApiDeps, conn: SlackConnection, method: string, args: Record<string, unknown>, opts: { attempts?: number } = {}): Promise<SlackAnswer> {
  return retry({ ...SLACK_RETRY, attempts: opts.attempts ?? SLACK_RETRY.attempts, retryOn: (e) => e instanceof SlackApiError && e.retryable, exhausted: () => new SlackApiError(method, 'no attempt left', false) }, () =>
    callOnce(deps, conn, method, args),
  );
}

async function callOnce(deps: ApiDeps, conn: SlackConnection, method: string, args: Record<string, unknown>): Promise<SlackAnswer> {
  if (!deps.outbound) throw new SlackApiError(method, 'this instance makes no outbound requests', false);
  const form = READ_METHODS.has(method);
  const body = form ? new URLSearchParams(Object.entries(args).map(([k, v]) => [k, String(v)])).toString() : JSON.stringify(args);
  const res = await deps.outbound.post({
    url: `${conn.apiUrl}/${method}`,
    headers: { authorization: `Bearer ${conn.botToken}`, 'content-type': form ? 'application/x-www-form-urlencoded' : 'application/json; charset=utf-8' },
    body,
    timeoutMs: TIMEOUT_MS,
  });
  if ('error' in res) throw new SlackApiError(method, res.error, !res.error.startsWith('refused'));
  if (res.status === 429 || res.status >= 500) throw new SlackApiError(method, `HTTP ${res.status}`, true);
  let answer: unknown;
  try {
    answer = JSON.parse(res.body ?? '');
  } catch {
    throw new SlackApiError(method, `HTTP ${res.status} with a body that is not JSON`, false);
  }
  const a = answer as Record<string, unknown> | null;
  if (a?.ok !== true) throw new SlackApiError(method, typeof a?.error === 'string' ? a.error.slice(0, 200) : `HTTP ${res.status} without ok`, false);
  return a as SlackAnswer;
}

/** Methods Slack does not accept JSON bodies for. */
const READ_METHODS = new Set(['users.info']);
