import { CliError, EXIT } from './errors.js';

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

  async request(method: string, path: string, body?: unknown): Promise<unknown> {
    let res: Response;
    try {
      res = await fetch(this.url(path), {
        method,
        headers: { authorization: `Bearer ${this.conn.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (e) {
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      throw new CliError(EXIT.unreachable, `cannot reach ${this.baseUrl}: ${cause?.code ?? cause?.message ?? (e as Error).message}`);
    }
    const text = await res.text();
    if (res.ok) {
      if (!text) return null;
      try {
        return JSON.parse(text);
      } catch {
        return text;
      }
    }
    let code = 'error';
    let message = text.slice(0, 500) || res.statusText;
    try {
      const parsed = JSON.parse(text) as { error?: { code?: string; message?: string } };
      code = parsed.error?.code ?? code;
      message = parsed.error?.message ?? message;
    } catch {
      // not JSON: keep the text
    }
    if (res.status === 401) throw new CliError(EXIT.unauthorized, `${this.baseUrl} refused the token (401): ${message}; check it with svc workspace add`);
    if (res.status === 403) throw new CliError(EXIT.unauthorized, `${method} ${path}: not allowed (403): ${message}`);
    throw new RemoteError(res.status, code, `${method} ${path}: ${res.status} ${message}`);
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

/** `encodeURI` keeps the `/` of item paths, which the routes take as one `{.+}` parameter. */
export const p = (path: string) => encodeURI(path);
