import { instanceAnnouncer } from '../events/announce.js';
import { z } from 'zod';
import { ApiError, badRequest, conflict, notFound } from '../common/errors.js';
import { hashPassword, MIN_PASSWORD_LENGTH, verifyPassword } from './passwords.js';
import { authenticate, issueToken, requireFullIdentity, requireInstanceAdmin, tokenSessionLabel, type Principal } from './auth.js';
import { parseBody } from '../common/validation.js';
import { USERNAME } from './username.js';
import { assertLoginAllowed, recordLoginFailure, recordLoginSuccess } from './login-throttle.js';
import type { CoreDeps } from '../deps.js';
import type { TokenRecord, User } from '../../ports.js';

/** Users of the instance, password login and browser sessions. */

export const SESSION_COOKIE = 'svc_session';
export const SESSION_TTL_MS = 7 * 24 * 3600 * 1000;

const username = USERNAME;
const password = z.string().min(MIN_PASSWORD_LENGTH, `at least ${MIN_PASSWORD_LENGTH} characters`).max(1024);

export const createUserBody = z.strictObject({
  username,
  email: z.email(),
  password: password.optional(),
  is_admin: z.boolean().default(false),
});

export const loginBody = z.strictObject({
  // Windmill logs in by email; a username works too.
  email: z.string().min(1).max(320),
  password: z.string().max(1024),
});

export const tokenLoginBody = z.object({ token: z.string().min(1).max(1024) }).strict();

export const setPasswordBody = z.strictObject({
  password,
  // Required once the user has a password: a session someone else holds (a browser left open, a
  // stolen cookie) must not be enough to take the account over.
  current_password: z.string().max(1024).optional(),
});

export type UserView = Omit<User, 'password_hash'>;

export function userView(u: User): UserView {
  const { password_hash: _hash, ...rest } = u;
  return rest;
}

export async function createUser(deps: Pick<CoreDeps, 'store' | 'clock' | 'config'>, principal: Principal, body: unknown): Promise<UserView> {
  requireInstanceAdmin(principal, 'create users');
  const input = parseBody(createUserBody, body);
  if ((await deps.store.listUsers()).some((u) => u.email.toLowerCase() === input.email.toLowerCase())) {
    throw conflict(`a user with email ${input.email} already exists`);
  }
  const user: User = {
    username: input.username,
    email: input.email,
    is_admin: input.is_admin,
    password_hash: input.password ? await hashPassword(input.password) : null,
    created_at: deps.clock.now().toISOString(),
  };
  const announce = await instanceAnnouncer(deps, principal.username);
  const events = announce('UserAdded', { kind: 'user', path: user.username, extra: { email: user.email, is_admin: user.is_admin } });
  if (!(await deps.store.createUser(user, events))) throw conflict(`user ${input.username} already exists`);
  return userView(user);
}

export async function listUsers(deps: Pick<CoreDeps, 'store'>, principal: Principal): Promise<UserView[]> {
  requireInstanceAdmin(principal, 'list the users of the instance');
  return (await deps.store.listUsers()).map(userView);
}

export async function whoami(deps: Pick<CoreDeps, 'store'>, principal: Principal): Promise<UserView> {
  const user = await deps.store.getUser(principal.username);
  if (!user) throw notFound(`user ${principal.username}`);
  return userView(user);
}

export interface Session {
  token: string;
  username: string;
  expires_at: string;
}

/**
 * Checks the password and opens a session; the same 401 for an unknown user and a wrong password.
 * `address` is the client's, for the per-address limit (core/identity/login-throttle.ts).
 */
export async function login(deps: Pick<CoreDeps, 'store' | 'clock' | 'config'>, body: unknown, address: string | null = null): Promise<Session> {
  if (typeof body === 'object' && body !== null && 'token' in body) return loginWithToken(deps, body);
  const input = parseBody(loginBody, body);
  const wanted = input.email.toLowerCase();
  const user = (await deps.store.listUsers()).find((u) => u.email.toLowerCase() === wanted || u.username.toLowerCase() === wanted) ?? null;
  // One count per person, whether they are named by email or by username.
  const account = user?.username ?? wanted;
  await assertLoginAllowed(deps, account, address);
  if (!(await verifyPassword(input.password, user?.password_hash ?? null)) || !user) {
    await recordLoginFailure(deps, account, address);
    throw new ApiError(401, 'invalid_credentials', 'wrong email or password');
  }
  await recordLoginSuccess(deps, account);
  return openSession(deps, user.username);
}

/**
 * Signs in with an API token instead of a password: how the bootstrap admin (who has a token and
 * no password) opens the console. Only an unrestricted personal token will do: a session acts
 * with the user's full rights, so a scoped, workspace-bound or job token must not turn into one.
 * Tokens are 256 random bits, so there is nothing to guess and no throttle to count.
 */
async function loginWithToken(deps: Pick<CoreDeps, 'store' | 'clock' | 'config'>, body: unknown): Promise<Session> {
  const { token } = parseBody(tokenLoginBody, body);
  const principal = await authenticate(deps, { bearer: token, session: null }).catch((error: unknown) => {
    if (error instanceof ApiError && error.status === 401) throw new ApiError(401, 'invalid_credentials', 'the token is unknown or expired');
    throw error;
  });
  if (principal.via !== 'token' || principal.scopes !== null || principal.workspaceId !== null) {
    throw new ApiError(403, 'forbidden', 'only an unrestricted API token signs in (not a scoped, workspace-bound or job token)');
  }
  // The session is the token's: it ends when the token expires or is deleted (tokens.ts), so a
  // stolen token turned into a cookie does not outlive its revocation, nor a short token its expiry.
  const record = principal.tokenHash ? await deps.store.getToken(principal.tokenHash) : null;
  if (!record) throw new ApiError(401, 'invalid_credentials', 'the token is unknown or expired');
  return openSession(deps, principal.username, record);
}

async function openSession(deps: Pick<CoreDeps, 'store' | 'clock' | 'config'>, username: string, from?: Pick<TokenRecord, 'prefix' | 'expires_at'>): Promise<Session> {
  const ttlEnd = deps.clock.now().getTime() + SESSION_TTL_MS;
  const tokenEnd = from?.expires_at ? Date.parse(from.expires_at) : Infinity;
  const expiresAt = new Date(Math.min(ttlEnd, tokenEnd)).toISOString();
  const token = await issueToken({ ...deps, signingKey: deps.config.signingKey }, {
    label: from ? tokenSessionLabel(from.prefix) : 'session',
    owner: username,
    kind: 'session',
    workspace_id: null,
    scopes: null,
    expires_at: expiresAt,
  });
  return { token, username, expires_at: expiresAt };
}

/** Ends the session (or revokes the token) the request was made with. */
export async function logout(deps: Pick<CoreDeps, 'store'>, principal: Principal): Promise<void> {
  if (principal.via === 'session' && principal.tokenHash) await deps.store.deleteToken(principal.tokenHash);
}

export async function setPassword(deps: Pick<CoreDeps, 'store' | 'clock'>, principal: Principal, body: unknown, address: string | null = null): Promise<void> {
  requireFullIdentity(principal, 'changing a password');
  const input = parseBody(setPasswordBody, body);
  const user = await deps.store.getUser(principal.username);
  if (!user) throw notFound(`user ${principal.username}`);
  if (user.password_hash !== null) {
    if (input.current_password === undefined) throw badRequest('invalid_request', 'current_password: the password you have now is required to change it', { field: 'current_password' });
    // Counted like a login, so a held session cannot be used to guess the password.
    await assertLoginAllowed(deps, user.username, address);
    if (!(await verifyPassword(input.current_password, user.password_hash))) {
      await recordLoginFailure(deps, user.username, address);
      throw new ApiError(403, 'invalid_credentials', 'current_password: not your current password');
    }
  }
  if (!(await deps.store.updateUser({ ...user, password_hash: await hashPassword(input.password) }))) throw notFound(`user ${principal.username}`);
  // A new password is how a person takes their account back: every other browser session of theirs
  // (one opened with the old password, or a stolen cookie) ends now; the one that changed it stays.
  for (const t of await deps.store.listTokens(principal.username)) {
    if (t.kind === 'session' && t.token_hash !== principal.tokenHash) await deps.store.deleteToken(t.token_hash);
  }
}

export async function requireUser(deps: Pick<CoreDeps, 'store'>, name: string, field = 'username'): Promise<User> {
  const user = await deps.store.getUser(name);
  if (!user) throw badRequest('unknown_user', `${field}: no user named ${name}`, { field });
  return user;
}
