import { transformSync } from 'esbuild';
import type { CodeRunner, RunHooks, RunOutcome, RunRequest } from '../../../functions/ports.js';

/** How the in-process client reaches the API: the app's `request`, no network. */
export type ApiFetch = (path: string, init: RequestInit) => Promise<Response>;

/**
 * A test double of the CodeRunner port for the unit tier: it runs a TypeScript script's `main` as
 * a function in this very process (types stripped by esbuild), with its arguments in schema order,
 * `console` going to the job's logs and `process.env` being the job's environment. It is NOT a
 * sandbox and proves nothing about isolation, timeouts or languages: the runtime tests and the
 * http tier cover those with the real runner. It exists so that rule tests (jobs, flows,
 * approvals, permissions) run in milliseconds.
 *
 * `fetch` of BASE_INTERNAL_URL and `import * as svc from 'svc-client'` give the script the API
 * calls the rule tests need, answered by the app in-process with the job's own token, as the real
 * client does over HTTP.
 */
export class FunctionRunner implements CodeRunner {
  /** Every request run, in order: what a test may check about the environment a job got. */
  readonly requests: RunRequest[] = [];
  private api: ApiFetch | null = null;

  connect(api: ApiFetch): void {
    this.api = api;
  }

  async run(req: RunRequest, hooks: RunHooks, signal: AbortSignal): Promise<RunOutcome> {
    this.requests.push(req);
    // A canceled job's run ends at once, as the real runner kills its process; the function itself
    // cannot be stopped, and a test's function that never ends is simply left behind.
    const aborted = new Promise<RunOutcome>((resolve) =>
      signal.addEventListener('abort', () => resolve({ ok: false, error: { name: 'Canceled', message: 'the run was aborted' } }), { once: true }),
    );
    return Promise.race([this.execute(req, hooks), aborted]);
  }

  private async execute(req: RunRequest, hooks: RunHooks): Promise<RunOutcome> {
    try {
      const main = this.load(req, hooks);
      const names = req.schema.order ?? Object.keys(req.schema.properties);
      const returned = main(...names.map((n) => req.args[n]));
      if (isAsyncIterable(returned)) {
        const chunks: string[] = [];
        for await (const chunk of returned) {
          chunks.push(String(chunk));
          hooks.onStream(String(chunk));
        }
        return { ok: true, result: chunks.join(''), streamed: true };
      }
      return { ok: true, result: (await returned) ?? null, streamed: false };
    } catch (e) {
      const error = e instanceof Error ? e : new Error(String(e));
      return { ok: false, error: { name: error.name, message: error.message, stack: error.stack } };
    }
  }

  async close(): Promise<void> {}

  private load(req: RunRequest, hooks: RunHooks): (...args: unknown[]) => unknown {
    const { code } = transformSync(req.content, { loader: 'ts', format: 'cjs' });
    const module = { exports: {} as Record<string, unknown> };
    const print = (...parts: unknown[]) => hooks.onLog(`${parts.map((p) => (typeof p === 'string' ? p : JSON.stringify(p))).join(' ')}\n`);
    const require = (name: string) => {
      if (name === 'svc-client') return this.client(req.env);
      throw new Error(`FunctionRunner: cannot import ${name}`);
    };
    // `fetch` of the API's own URL reaches the app in-process; anything else is refused.
    const fetch = (url: string, init: RequestInit = {}) => {
      const base = req.env.BASE_INTERNAL_URL;
      if (!this.api || !url.startsWith(`${base}/`)) throw new Error(`FunctionRunner: cannot fetch ${url}`);
      return this.api(url.slice(base.length), init);
    };
    new Function('module', 'exports', 'require', 'console', 'process', 'fetch', code)(module, module.exports, require, { log: print, error: print }, { env: req.env }, fetch);
    const main = module.exports.main;
    if (typeof main !== 'function') throw new Error('the script has no main function');
    return main as (...args: unknown[]) => unknown;
  }

  private client(env: Record<string, string>) {
    const get = async (route: string) => {
      if (!this.api) throw new Error('FunctionRunner: not connected to an app');
      const res = await this.api(`/api/w/${env.OV_WORKSPACE}/${route}`, { headers: { authorization: `Bearer ${env.OV_TOKEN}` } });
      const text = await res.text();
      if (!res.ok) throw new Error(`svc-client: ${route} failed with status ${res.status}: ${text}`);
      return JSON.parse(text);
    };
    return {
      getVariable: async (path: string) => (await get(`variables/get/${path.replace(/^\$var:/, '')}`)).value,
      getResource: (path: string) => get(`resources/get_value_interpolated/${path.replace(/^\$res:/, '')}`),
      getResumeUrls: (approver?: string, flowLevel = false) => {
        const query = new URLSearchParams({ ...(approver ? { approver } : {}), ...(flowLevel ? { flow_level: 'true' } : {}) }).toString();
        return get(`jobs/resume_urls/${env.OV_JOB_ID}/${Math.floor(Math.random() * 2 ** 32)}${query ? `?${query}` : ''}`);
      },
      getContext: () => ({ workspace: env.OV_WORKSPACE, jobId: env.OV_JOB_ID, jobPath: env.OV_JOB_PATH, username: env.OV_USERNAME }),
    };
  }
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}
