import { retry } from '../common/retry.js';
import type { CoreDeps } from '../deps.js';
import type { TeamsConnection } from './chat-settings.js';

/**
 * Calls of the Bot Framework connector, through the instance's SSRF-guarded outbound client: a
 * token from the bot's identity endpoint (client credentials), then the connector's REST calls
 * with it. Network failures, 5xx and 429 are tried again with backoff; other answers are final.
 * The password and tokens travel in bodies and headers only, never in a URL or a log line.
 */

export class TeamsApiError extends Error {
  constructor(
    readonly what: string,
    readonly reason: string,
    readonly retryable: boolean,
  ) {
    super(`Teams ${what} failed: ${reason}`);
    this.name = 'TeamsApiError';
  }
}

const TIMEOUT_MS = 10_000;
const TEAMS_RETRY = { attempts: 3, baseDelayMs: 250, maxDelayMs: 2000 };
const BOT_SCOPE = 'https://api.botframework.com/.default';

type ApiDeps = Pick<CoreDeps, 'outbound'>;

/** GET, POST or PUT `url` with a JSON body (and answer); `bearer` when the call needs a token. */
export async function fetchJson(deps: ApiDeps, what: string, req: { method: 'GET' | 'POST' | 'PUT'; url: string; body?: unknown; form?: Record<string, string>; bearer?: string }, attempts = TEAMS_RETRY.attempts): Promise<Record<string, unknown>> {
  return retry({ ...TEAMS_RETRY, attempts, retryOn: (e) => e instanceof TeamsApiError && e.retryable, exhausted: () => new TeamsApiError(what, 'no attempt left', false) }, async () => {
    if (!deps.outbound) throw new TeamsApiError(what, 'this instance makes no outbound requests', false);
    const headers: Record<string, string> = { accept: 'application/json' };
    if (req.bearer) headers.authorization = `Bearer ${req.bearer}`;
    let body = '';
    if (req.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(req.form).toString();
    } else if (req.body !== undefined) {
      headers['content-type'] = 'application/json; charset=utf-8';
      body = JSON.stringify(req.body);
    }
    const res = await deps.outbound.post({ method: req.method, url: req.url, headers, body, timeoutMs: TIMEOUT_MS });
    if ('error' in res) throw new TeamsApiError(what, res.error, !res.error.startsWith('refused'));
    if (res.status === 429 || res.status >= 500) throw new TeamsApiError(what, `HTTP ${res.status}`, true);
    if (res.status < 200 || res.status >= 300) throw new TeamsApiError(what, `HTTP ${res.status}`, false);
    try {
      const parsed: unknown = JSON.parse(res.body || '{}');
      return parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
    } catch {
      throw new TeamsApiError(what, `HTTP ${res.status} with a body that is not JSON`, false);
    }
  });
}

export async function botToken(deps: ApiDeps, conn: TeamsConnection): Promise<string> {
  const answer = await fetchJson(deps, 'token', { method: 'POST', url: conn.tokenUrl, form: { grant_type: 'client_credentials', client_id: conn.appId, client_secret: conn.appPassword, scope: BOT_SCOPE } });
  if (typeof answer.access_token !== 'string') throw new TeamsApiError('token', 'the answer has no access_token', false);
  return answer.access_token;
}

/** A connector call (`/v3/...`) with a fresh bot token. */
export async function callConnector(deps: ApiDeps, conn: TeamsConnection, method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown): Promise<Record<string, unknown>> {
  const bearer = await botToken(deps, conn);
  return fetchJson(deps, `${method} ${path.split('?')[0]}`, { method, url: `${conn.serviceUrl}${path}`, body, bearer });
}

/** The id of the team's channel named `name` ("General" is the channel whose name Teams leaves out). */
export async function channelIdByName(deps: ApiDeps, conn: TeamsConnection, name: string): Promise<string | null> {
  const answer = await callConnector(deps, conn, 'GET', `/v3/teams/${encodeURIComponent(conn.teamId)}/conversations`);
  const channels = Array.isArray(answer.conversations) ? (answer.conversations as { id?: unknown; name?: unknown }[]) : [];
  const wanted = name.replace(/^#/, '').toLowerCase();
  const found = channels.find((c) => String(c.name ?? 'General').toLowerCase() === wanted);
  return typeof found?.id === 'string' ? found.id : null;
}
