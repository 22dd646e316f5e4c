import { createMemoryService, type MemoryService } from '../../../functions/shells/memory.js';
import type { CoreConfig } from '../../../functions/core/deps.js';
import type { Clock, EmailSender, Entity, Job, TopicPublisher } from '../../../functions/ports.js';
import { FunctionRunner } from './function-runner.js';

/** A clock the test moves: timeouts and expiries happen when the test says, not after a wait. */
export class ManualClock implements Clock {
  private at = Date.now();
  now(): Date {
    return new Date(this.at);
  }
  advance(ms: number): void {
    this.at += ms;
  }
}

export interface InProcessService extends MemoryService {
  token: string;
  workspace: string;
  clock: ManualClock;
  runner: FunctionRunner;
  /** A request to the app with the admin token unless `token` says otherwise (null: none). */
  fetch(path: string, init?: RequestInit & { token?: string | null }): Promise<Response>;
  /** JSON POST with the admin token. */
  post(path: string, body: unknown, token?: string | null): Promise<Response>;
  /** The job as the API shows it, once everything set in motion has settled. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the API's JSON view, read as a client reads it
  job(id: string): Promise<Record<string, any>>;
}

/**
 * The service in memory with requests through Hono's `app.request()`: the same routes, core and
 * rules as `bin/svc.js serve`, without a port, a process or a file. Jobs run in FunctionRunner.
 */
export async function inProcessService(opts: { config?: Partial<CoreConfig>; email?: EmailSender | null; topics?: TopicPublisher | null; maxBodyBytes?: number; webhookAllowPrivate?: boolean } = {}): Promise<InProcessService> {
  const token = `test-admin-${Math.random().toString(36).slice(2)}`;
  const clock = new ManualClock();
  const runner = new FunctionRunner();
  const svc = await createMemoryService({ runner, clock, adminToken: token, ...opts });
  runner.connect((path, init) => Promise.resolve(svc.app.request(path, init)));
  const fetch = async (path: string, init: RequestInit & { token?: string | null } = {}) => {
    const { token: as = token, ...rest } = init;
    const headers = new Headers(rest.headers);
    if (as !== null && !headers.has('authorization')) headers.set('authorization', `Bearer ${as}`);
    return svc.app.request(path, { ...rest, headers });
  };
  const post = (path: string, body: unknown, as: string | null = token) =>
    fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), token: as });
  return {
    ...svc,
    token,
    workspace: 'main',
    clock,
    runner,
    fetch,
    post,
    async job(id) {
      await svc.settled();
      const res = await fetch(`/api/w/main/jobs_u/get/${id}`);
      if (res.status !== 200) throw new Error(`job ${id}: ${res.status} ${await res.text()}`);
      return res.json();
    },
  };
}

/** Creates a script and returns its hash. */
export async function createScript(s: InProcessService, path: string, content: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await s.post(`/api/w/${s.workspace}/scripts/create`, { path, language: 'bun', content, ...extra });
  const text = await res.text();
  if (res.status !== 201) throw new Error(`create ${path}: ${res.status} ${text}`);
  return text;
}

/**
 * The process "dies" when it inserts the first job of flow step `moduleId`: the insert throws
 * `message` and the job never reaches the store (the run naming it is stored already, as a store
 * that writes a run's jobs just after it leaves them). Answers
 * the job that was lost, once it was.
 */
export function loseFirstInsertOf(s: InProcessService, moduleId: string, message: string): () => Job | undefined {
  let lost: Job | undefined;
  const take = (jobs: Job[] = []) => {
    const job = lost ? undefined : jobs.find((j) => j.flow_module === moduleId);
    if (job) lost = job;
    return job;
  };
  const insertJob = s.store.insertJob.bind(s.store);
  s.store.insertJob = async (job: Job) => {
    if (take([job])) throw new Error(message);
    return insertJob(job);
  };
  // A store may insert the jobs a run names just after the run (Store.replaceEntity): it dies between the two.
  const diesAfterEntity = async (jobs: Job[] | undefined, write: (kept: Job[] | undefined) => Promise<boolean>) => {
    const job = take(jobs);
    if (!job) return write(jobs);
    if (!(await write(jobs!.filter((j) => j !== job)))) {
      lost = undefined;
      return false;
    }
    throw new Error(message);
  };
  const replace = s.store.replaceEntity.bind(s.store);
  s.store.replaceEntity = (e, expectedVersion, events, jobs) => diesAfterEntity(jobs, (kept) => replace(e, expectedVersion, events, kept));
  const create = s.store.createEntity.bind(s.store);
  s.store.createEntity = (e, events, jobs) => diesAfterEntity(jobs, (kept) => create(e, events, kept));
  return () => lost;
}

/**
 * Another writer moves the document on just before each of the next `times` conditional writes
 * `when` picks (a ticker or a count landing between a read and its write), so each of them loses
 * its race. Answers how many interruptions are left.
 */
export function interruptWrites(s: InProcessService, times: number, when: (e: Entity) => boolean): () => number {
  const store = s.deps.store;
  const replace = store.replaceEntity.bind(store);
  let left = times;
  store.replaceEntity = async (e, expectedVersion, events) => {
    if (left > 0 && when(e)) {
      left -= 1;
      const stored = (await store.getEntity(e.kind, e.workspace_id, e.key))!;
      await replace({ ...stored, version: stored.version + 1 }, stored.version);
    }
    return replace(e, expectedVersion, events);
  };
  return () => left;
}

/** A JSON POST body for `fetch`. */
export const json = (body: unknown): RequestInit => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

/**
 * Lets background work (jobs, flow steps) take its turns until `ok` holds, for a state reached
 * while something still runs (where `settled` would wait for the end); gives up after `turns`.
 */
export async function until<T>(read: () => Promise<T>, ok: (value: T) => boolean, turns = 200): Promise<T> {
  let value = await read();
  for (let i = 0; i < turns && !ok(value); i++) {
    await new Promise((r) => setImmediate(r));
    value = await read();
  }
  return value;
}

/** Characters of flow run documents the store is given to write (created or replaced) from now on. */
export function flowRunCharsWritten(s: InProcessService): () => number {
  let chars = 0;
  const count = (e: Pick<Entity, 'kind' | 'value'>) => {
    if (e.kind === 'flow_run') chars += JSON.stringify(e.value).length;
  };
  const create = s.store.createEntity.bind(s.store);
  const replace = s.store.replaceEntity.bind(s.store);
  s.store.createEntity = (e, ...rest) => (count(e), create(e, ...rest));
  s.store.replaceEntity = (e, ...rest) => (count(e), replace(e, ...rest));
  return () => chars;
}
