import type { WorkspaceView } from '../core/views/settings-views.js';
import { CliError, EXIT } from './errors.js';
import { itemUrlPath } from './remote-names.js';

/** The workspace API as the CLI uses it: fetch with a Bearer token, errors as CliErrors. */

export interface Connection {
  baseUrl: string;
  workspaceId: string;
  token: string;
}

/** A 4xx/5xx answer of the API, with the server's own message. */
export class RemoteError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'RemoteError';
  }
}

export class Remote {
  readonly baseUrl: string;

  constructor(readonly conn: Connection) {
    this.baseUrl = conn.baseUrl.replace(/\/+$/, '');
  }

  /** `/scripts/list` -> `/api/w/<ws>/scripts/list`; paths starting with `/api` are left alone. */
  private url(path: string): string {
    return this.baseUrl + (path.startsWith('/api/') ? path : `/api/w/${encodeURIComponent(this.conn.workspaceId)}${path}`);
  }

  /** The raw answer of a successful request (a stream, for SSE); errors as in `request`. */
  async open(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
    let res: Response;
    try {
      res = await fetch(this.url(path), {
        method,
        headers: { authorization: `Bearer ${this.conn.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (e) {
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      throw new CliError(EXIT.unreachable, `cannot reach ${this.baseUrl}: ${cause?.code ?? cause?.message ?? (e as Error).message}`);
    }
    if (!res.ok) await this.fail(method, path, res.status, await res.text(), res.statusText);
    return res;
  }

  async request(method: string, path: string, body?: unknown): Promise<unknown> {
    const res = await this.open(method, path, body);
    const text = await res.text();
    if (!text) return null;
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }

  private async fail(method: string, path: string, status: number, text: string, statusText: string): Promise<never> {
    let code = 'error';
    let message = text.slice(0, 500) || statusText;
    try {
      const parsed = JSON.parse(text) as { error?: { code?: string; message?: string } };
      code = parsed.error?.code ?? code;
      message = parsed.error?.message ?? message;
    } catch {
      // not JSON: keep the text
    }
    if (status === 401) throw new CliError(EXIT.unauthorized, `${this.baseUrl} refused the token (401): ${message}; check it with svc workspace add`);
    const ws = this.conn.workspaceId;
    // The server does not say whether a workspace one may not enter exists: both are the same 403.
    if (status === 403 && !path.startsWith('/api/') && (message.endsWith(`is not a member of workspace ${ws}`) || message === `this token does not allow workspace ${ws}`)) await this.unknownWorkspace(`no workspace ${ws} this token can use`);
    if (status === 403) throw new CliError(EXIT.unauthorized, `${method} ${path}: not allowed (403): ${message}`);
    if (status === 404 && !path.startsWith('/api/') && message === `workspace ${ws} not found`) await this.unknownWorkspace(`no workspace ${ws}`);
    throw new RemoteError(status, code, `${method} ${path}: ${status} ${message}`);
  }

  /** Names the workspace that is not there, and the ones the token can use. */
  private async unknownWorkspace(what: string): Promise<never> {
    let known = '';
    try {
      const list = (await this.get<WorkspaceView[]>('/api/workspaces/list')).map((w) => w.id);
      known = list.length ? `; the workspaces this token can use there are: ${list.join(', ')}` : '; this token can use no workspace there';
    } catch {
      // The list is a courtesy: the error below stands without it.
    }
    throw new CliError(EXIT.usage, `${what} at ${this.baseUrl}${known}`);
  }

  get<T>(path: string): Promise<T> {
    return this.request('GET', path) as Promise<T>;
  }

  post<T>(path: string, body: unknown): Promise<T> {
    return this.request('POST', path, body) as Promise<T>;
  }

  delete(path: string): Promise<unknown> {
    return this.request('DELETE', path);
  }

  /** GET that answers null for a 404 instead of throwing. */
  async find<T>(path: string): Promise<T | null> {
    try {
      return await this.get<T>(path);
    } catch (e) {
      if (e instanceof RemoteError && e.status === 404) return null;
      throw e;
    }
  }

  /** Checks the server is there and the token may read the workspace. */
  async check(): Promise<void> {
    await this.get('/workspaces/get_settings');
  }
}

/** An item's path in a request URL: `encodeURI` keeps its `/`, which the routes take as one `{.+}` parameter; never a path that would climb out of the workspace's API or the sync folder (remote-names.ts). */
export const p = itemUrlPath;
