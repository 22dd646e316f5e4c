import { createHmac, timingSafeEqual } from 'node:crypto';
import { ApiError } from '../common/errors.js';
import { authenticate } from '../identity/auth.js';
import { authorRights } from './author.js';
import { Rights } from '../identity/permissions.js';
import { getVariable } from '../workspace/variables.js';
import { getResource } from '../workspace/resources.js';
import { BindingError, interpolate } from '../workspace/bindings.js';
import type { HttpTrigger } from './http-trigger-document.js';
import type { CoreDeps } from '../deps.js';

/**
 * Who may call a custom route and whom the run acts as (README: HTTP routes). `svc`: the caller's
 * own token, and the run is theirs, exactly as on a webhook. Every other method proves that the
 * caller holds a secret the route's author chose (a key, a password, an HMAC secret), and the run
 * acts as that author. The proxy form acts as the token it injects, as a rewrite to the run
 * endpoint with that `Authorization` header would. Secrets are compared in constant time and
 * never appear in an error.
 */

export interface RouteCall {
  headers: Record<string, string>;
  /** The raw body, which is what a signature covers. */
  body: Uint8Array;
  /** From `Authorization: Bearer` or `?token=`, for `svc` routes. */
  bearer: string | null;
}

const unauthorized = (message: string) => new ApiError(401, 'unauthorized', message);

/** The rights the run gets; 401 when the caller did not prove what the route asks for. */
export async function authorizeRouteCall(deps: CoreDeps, workspaceId: string, t: HttpTrigger, call: RouteCall): Promise<Rights> {
  if (t.authentication_method === 'svc') {
    if (!call.bearer) throw unauthorized('this route needs a token: send "Authorization: Bearer <token>"');
    return Rights.load(deps, await authenticate(deps, { bearer: call.bearer, session: null }), workspaceId);
  }
  const author = await authorRights(deps, workspaceId, t, `route ${t.path}`);
  switch (t.authentication_method) {
    case 'none':
      break;
    case 'api_key': {
      const header = t.api_key_header!;
      const given = call.headers[header.toLowerCase()];
      if (given === undefined) throw unauthorized(`this route needs its key in the ${header} header`);
      if (!sameSecret(given, await secretOf(deps, author, t.secret_variable!))) throw unauthorized(`the key in ${header} is wrong`);
      break;
    }
    case 'signature': {
      const header = t.signature_header!;
      const given = call.headers[header.toLowerCase()];
      if (given === undefined) throw unauthorized(`this route needs a signature in the ${header} header: sha256=<hex HMAC-SHA256 of the body>`);
      const expected = `sha256=${createHmac('sha256', await secretOf(deps, author, t.secret_variable!)).update(call.body).digest('hex')}`;
      if (!sameSecret(given.trim().toLowerCase(), expected)) throw unauthorized(`the signature in ${header} does not match the body`);
      break;
    }
    case 'basic': {
      const given = basicCredentials(call.headers.authorization);
      if (!given) throw unauthorized('this route needs "Authorization: Basic <base64 of user:password>"');
      const expected = await basicOf(deps, author, t.basic_auth_resource!);
      // Both compared, always, so the time taken does not tell which one was wrong.
      const userOk = sameSecret(given.username, expected.username);
      const passwordOk = sameSecret(given.password, expected.password);
      if (!userOk || !passwordOk) throw unauthorized('wrong user name or password');
      break;
    }
  }
  if (!t.inject_token_variable) return author;
  const token = await secretOf(deps, author, t.inject_token_variable);
  try {
    return await Rights.load(deps, await authenticate(deps, { bearer: token, session: null }), workspaceId);
  } catch (e) {
    // The caller did nothing wrong: the route's stored token no longer works.
    if (e instanceof ApiError && e.status === 401) throw new ApiError(503, 'misconfigured', `the token this route injects (variable ${t.inject_token_variable}) is unknown or expired`);
    throw e;
  }
}

async function secretOf(deps: CoreDeps, author: Rights, path: string): Promise<string> {
  return (await getVariable(deps, author, path)).value;
}

async function basicOf(deps: CoreDeps, author: Rights, path: string): Promise<{ username: string; password: string }> {
  let value: unknown;
  try {
    value = await interpolate(deps, author, (await getResource(deps, author, path)).value, 1);
  } catch (e) {
    throw e instanceof BindingError ? e.toApiError() : e;
  }
  const v = value as { username?: unknown; password?: unknown } | null;
  if (typeof v?.username !== 'string' || typeof v.password !== 'string') {
    throw new ApiError(503, 'misconfigured', `connection ${path} needs string fields username and password for basic authentication`);
  }
  return { username: v.username, password: v.password };
}

function basicCredentials(header: string | undefined): { username: string; password: string } | null {
  const m = header?.match(/^Basic\s+([A-Za-z0-9+/=]+)\s*$/i);
  if (!m) return null;
  const text = Buffer.from(m[1], 'base64').toString('utf8');
  const colon = text.indexOf(':');
  return colon < 0 ? null : { username: text.slice(0, colon), password: text.slice(colon + 1) };
}

/** Constant time over the expected length: comparing digests of both keeps lengths from leaking. */
function sameSecret(given: string, expected: string): boolean {
  const a = createHmac('sha256', 'route-secret').update(given).digest();
  const b = createHmac('sha256', 'route-secret').update(expected).digest();
  return timingSafeEqual(a, b);
}
