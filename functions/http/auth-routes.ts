import { Hono } from 'hono';
import { createUser, listUsers, login, logout, setPassword, whoami } from '../core/identity/users.js';
import { clearSession, sessionOf, sessionsToEnd, setSession } from './session-cookie.js';
import { createToken, deleteToken, listTokens } from '../core/identity/tokens.js';
import { listOutbox } from '../core/identity/notifications.js';
import type { CoreDeps } from '../core/deps.js';
import type { Principal } from '../core/identity/auth.js';
import type { AppEnv } from './context.js';
import { readJsonBody } from './json-body.js';
import { clientAddress } from './client-address.js';
import { listAudit } from '../core/identity/login-throttle.js';
import { authenticate, requireInstanceAdmin } from '../core/identity/auth.js';
import type { LoginView } from '../core/views/identity-views.js';

/** Users, password login (session cookie) and the caller's own API tokens. */
export function authRoutes(deps: CoreDeps) {
  const r = new Hono<AppEnv>();

  r.post('/auth/login', async (c) => {
    const previous = sessionOf(c);
    const session = await login(deps, await readJsonBody(c), clientAddress(c));
    // Logging in again (switching account) ends the session this browser had, not just its cookie.
    const before = previous ? await authenticate(deps, { bearer: null, session: previous }).catch(() => null) : null;
    if (before) await logout(deps, before);
    setSession(c, session.token, new Date(session.expires_at));
    return c.json({ username: session.username, expires_at: session.expires_at } satisfies LoginView);
  });

  r.post('/auth/logout', async (c) => {
    const principal = c.get('principal') as Principal | undefined;
    if (principal) await logout(deps, principal);
    for (const session of sessionsToEnd(c)) {
      const other = await authenticate(deps, { bearer: null, session }).catch(() => null);
      if (other) await logout(deps, other);
    }
    clearSession(c);
    // The console's "Log out" is a plain form: the browser then shows the login page, not this text.
    if (c.req.header('sec-fetch-mode') === 'navigate') return c.redirect('/login', 303);
    return c.text('logged out');
  });

  // The instance's audit log (lockouts, for now), for instance admins.
  r.get('/audit/list', async (c) => {
    requireInstanceAdmin(c.get('principal'), 'read the audit log');
    return c.json(await listAudit(deps));
  });

  r.get('/users/whoami', async (c) => c.json(await whoami(deps, c.get('principal'))));
  r.post('/users/create', async (c) => c.text((await createUser(deps, c.get('principal'), await readJsonBody(c))).username, 201));
  r.get('/users/list', async (c) => c.json(await listUsers(deps, c.get('principal'))));
  r.post('/users/setpassword', async (c) => {
    await setPassword(deps, c.get('principal'), await readJsonBody(c), clientAddress(c));
    return c.text('password changed');
  });

  // The token's value is in this response and nowhere else, ever (spec 5.2).
  r.post('/users/tokens/create', async (c) => c.text(await createToken(deps, c.get('principal'), await readJsonBody(c)), 201));
  r.get('/users/tokens/list', async (c) => c.json(await listTokens(deps, c.get('principal'))));
  // Notices that could not be mailed (no SMTP/SES configured): token expiry, for now.
  r.get('/users/notifications', async (c) => c.json(await listOutbox(deps, c.get('principal'))));
  r.delete('/users/tokens/delete/:prefix', async (c) => {
    await deleteToken(deps, c.get('principal'), c.req.param('prefix'));
    return c.text(`deleted token ${c.req.param('prefix')}`);
  });

  return r;
}
