import { ApiError } from '../common/errors.js';
import { getResource } from './resources.js';
import { getVariable } from './variables.js';
import type { Rights } from '../identity/permissions.js';
import type { CoreDeps } from '../deps.js';

/**
 * `$var:<path>` and `$res:<path>` references (spec 2.1, 2.2): a job argument holding one receives
 * the variable's or resource's value right before the job runs, read with the job's identity; a
 * resource's value may itself reference variables (`"password": "$var:f/db/password"`).
 */

const VARIABLE = '$var:';
const RESOURCE = '$res:';
/** A resource referencing a resource referencing ... stops here, so a cycle cannot hang a job. */
const MAX_DEPTH = 3;

/** Why a reference could not be resolved; the message names the reference and never a value. */
export class BindingError extends Error {
  constructor(
    message: string,
    /** What an API caller gets for it: 403 or 404 from the failed read, 400 otherwise. */
    readonly status: 400 | 403 | 404 = 400,
  ) {
    super(message);
    this.name = 'BindingError';
  }

  toApiError(): ApiError {
    return new ApiError(this.status, 'unresolvable_reference', this.message);
  }
}

type Deps = Pick<CoreDeps, 'store' | 'cipher'>;

export function isReference(value: unknown): value is string {
  return typeof value === 'string' && (value.startsWith(VARIABLE) || value.startsWith(RESOURCE));
}

/**
 * Where the first `$var:`/`$res:` reference sits in `args` (`body.items[0]`), at any depth, or null.
 * Values sent by someone the run does not act as must hold none: the run resolves them as its own
 * identity, so the sender would read whatever secret that identity may by naming it, through a
 * script that returns, logs or sends on its input, or a flow step whose input comes from it.
 * That is a route's caller without a svc token (the run is the route's author's) and an approver
 * (the flow's next steps are its creator's).
 */
export function findReference(args: Record<string, unknown>): string | null {
  const stack: Array<[string, unknown]> = Object.entries(args).map(([name, value]) => [name, value]);
  while (stack.length > 0) {
    const [at, value] = stack.pop()!;
    if (isReference(value)) return at;
    if (Array.isArray(value)) value.forEach((v, i) => stack.push([`${at}[${i}]`, v]));
    else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) stack.push([`${at}.${k}`, v]);
  }
  return null;
}

/** 400 `reference_not_allowed` naming where, when `args` hold a reference (see findReference); `why` ends the message. */
export function refuseReferences(args: Record<string, unknown>, why: string): void {
  const at = findReference(args);
  if (at === null) return;
  throw new ApiError(400, 'reference_not_allowed', `${at}: a $var: or $res: reference cannot be passed here: ${why}`, { field: at });
}

/** The job's arguments with every top-level reference replaced by its value. */
export async function resolveArgs(deps: Deps, rights: Rights, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(args)) {
    out[name] = isReference(value) ? await resolveReference(deps, rights, value, 0) : value;
  }
  return out;
}

/** The value with every reference inside it (at any depth of objects and arrays) resolved. */
export async function interpolate(deps: Deps, rights: Rights, value: unknown, depth = 0): Promise<unknown> {
  if (isReference(value)) return resolveReference(deps, rights, value, depth);
  if (Array.isArray(value)) return Promise.all(value.map((v) => interpolate(deps, rights, v, depth)));
  if (value !== null && typeof value === 'object') {
    const entries = await Promise.all(Object.entries(value).map(async ([k, v]) => [k, await interpolate(deps, rights, v, depth)] as const));
    return Object.fromEntries(entries);
  }
  return value;
}

async function resolveReference(deps: Deps, rights: Rights, reference: string, depth: number): Promise<unknown> {
  if (depth >= MAX_DEPTH) throw new BindingError(`${reference}: references nest deeper than ${MAX_DEPTH} levels`);
  try {
    if (reference.startsWith(VARIABLE)) return (await getVariable(deps, rights, reference.slice(VARIABLE.length))).value;
    const resource = await getResource(deps, rights, reference.slice(RESOURCE.length));
    return await interpolate(deps, rights, resource.value, depth + 1);
  } catch (e) {
    if (e instanceof ApiError) throw new BindingError(`cannot resolve ${reference}: ${e.message}`, e.status === 403 || e.status === 404 ? e.status : 400);
    throw e;
  }
}
