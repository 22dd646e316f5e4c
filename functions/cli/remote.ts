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

/**
 * The most of one answer the CLI reads (a server is not trusted with the user's memory: an answer
 * that never ends would otherwise grow the process until it dies). Far above any real answer: a
 * request body is 10 MiB at most by default, and lists are smaller than what they list.
 */
export const MAX_ANSWER_BYTES = 256 * 1024 * 1024;
/** An error's text is shown cut to 500 characters: no more of it is read than this. */
const MAX_ERROR_BYTES = 64 * 1024;

/**
 * The body's text, read up to `limit` bytes; past that the rest is not read (the connection is
 * closed) and `cut` says so.
 */
async function readBounded(res: Response, limit: number): Promise<{ text: string; cut: boolean }> {
  if (!res.body) return { text: '', cut: false };
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (size + value.byteLength > limit) {
      chunks.push(value.subarray(0, limit - size));
      await reader.cancel().catch(() => undefined);
      return { text: Buffer.concat(chunks).toString('utf8'), cut: true };
    }
    chunks.push(value);
    size += value.byteLength;
  }
  return { text: Buffer.concat(chunks).toString('utf8'), cut: false };
}

/**
 * Text of an event stream passed on as it comes, as long as no line of it grows past `limit`
 * characters: a server that sends one line without end is refused, not buffered until the process dies.
 */
export function boundedLines(limit: number, what: string): TransformStream<string, string> {
  let line = 0;
  return new TransformStream({
    transform(piece, out) {
      const end = Math.max(piece.lastIndexOf('\n'), piece.lastIndexOf('\r'));
      line = end < 0 ? line + piece.length : piece.length - end - 1;
      if (line > limit) throw new CliError(EXIT.failed, `${what}: the server sent a line longer than ${limit} characters, more than any event of svc; not read`);
      out.enqueue(piece);
    },
  });
}

/**
 * How long the CLI waits for a server that sends nothing: neither its answer's headers nor the next
 * piece of its body. A server that stalls (or never answers) would otherwise hold the command, and
 * a CI job running it, forever. svc's event streams send a keep-alive every 15 s; its slowest
 * answers (a save that locks a script's dependencies) come well within this.
 */
export const IDLE_TIMEOUT_MS = 10 * 60_000;

/** An abort signal that fires once `idleMs` pass without `touch()`, and the answer's body watched the same way. */
function idleWatch(idleMs: number, what: string) {
  const abort = new AbortController();
  const stalled = () => new CliError(EXIT.unreachable, `${what}: the server sent nothing for ${Math.round(idleMs / 1000)} s; gave up`);
  let onIdle = (): void => undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const touch = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      onIdle();
      abort.abort(stalled());
    }, idleMs);
    // Never what keeps the process alive: a pending request does that itself.
    timer.unref();
  };
  const stop = () => clearTimeout(timer);
  /** The body, erroring with the stall once it sends nothing for `idleMs`. */
  const watched = (body: ReadableStream<Uint8Array>) =>
    body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        start(controller) {
          onIdle = () => {
            try {
              controller.error(stalled());
            } catch {
              // Already closed or canceled.
            }
          };
        },
        transform(chunk, controller) {
          touch();
          controller.enqueue(chunk);
        },
        flush: stop,
      }),
    );
  return { signal: abort.signal, touch, stop, stalled, watched };
}

export class Remote {
  readonly baseUrl: string;

  constructor(
    readonly conn: Connection,
    private readonly maxAnswerBytes = MAX_ANSWER_BYTES,
    private readonly idleMs = IDLE_TIMEOUT_MS,
  ) {
    this.baseUrl = conn.baseUrl.replace(/\/+$/, '');
  }

  /** A successful answer's whole text; one larger than the CLI reads is an error. */
  async text(res: Response, method: string, path: string): Promise<string> {
    const { text, cut } = await readBounded(res, this.maxAnswerBytes);
    if (cut) throw new CliError(EXIT.failed, `${method} ${path}: the server's answer is larger than ${this.maxAnswerBytes} bytes, more than any answer of svc; not read`);
    return text;
  }

  /** `/scripts/list` -> `/api/w/<ws>/scripts/list`; paths starting with `/api` are left alone. */
  private url(path: string): string {
    return this.baseUrl + (path.startsWith('/api/') ? path : `/api/w/${encodeURIComponent(this.conn.workspaceId)}${path}`);
  }

  /** The raw answer of a successful request (a stream, for SSE); errors as in `request`. */
  async open(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
    const idle = idleWatch(this.idleMs, `${method} ${path}`);
    let fetched: Response;
    idle.touch();
    try {
      fetched = await fetch(this.url(path), {
        method,
        headers: { authorization: `Bearer ${this.conn.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: idle.signal,
      });
    } catch (e) {
      idle.stop();
      if (idle.signal.aborted) throw idle.stalled();
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      throw new CliError(EXIT.unreachable, `cannot reach ${this.baseUrl}: ${cause?.code ?? cause?.message ?? (e as Error).message}`);
    }
    idle.touch();
    const bodiless = !fetched.body || [204, 205, 304].includes(fetched.status);
    if (bodiless) idle.stop();
    const res = bodiless ? fetched : new Response(idle.watched(fetched.body!), { status: fetched.status, statusText: fetched.statusText, headers: fetched.headers });
    if (!res.ok) await this.fail(method, path, res.status, (await readBounded(res, MAX_ERROR_BYTES)).text, res.statusText);
    return res;
  }

  async request(method: string, path: string, body?: unknown): Promise<unknown> {
    const res = await this.open(method, path, body);
    const text = await this.text(res, method, path);
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
