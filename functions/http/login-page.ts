import { createHash } from 'node:crypto';
import { Hono } from 'hono';
import { html, raw } from './html.js';

/**
 * A minimal login page for people who open an approval page that needs a login: it posts the
 * credentials to `/api/auth/login` (which sets the session cookie) and goes back to `next`.
 */

// Static script: reads `next` from the query itself, so nothing of the request is put into it.
const SCRIPT = `
const form = document.getElementById('login');
const message = document.getElementById('message');
form.addEventListener('submit', async (event) => {
  event.preventDefault();
  message.textContent = '';
  const body = JSON.stringify({ email: form.email.value, password: form.password.value });
  const res = await fetch('/api/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body, credentials: 'same-origin' });
  if (!res.ok) {
    const answer = await res.json().catch(() => null);
    message.textContent = answer?.error?.message ?? 'login failed';
    return;
  }
  const next = new URLSearchParams(location.search).get('next') ?? '/';
  // Only a path on this site: never an open redirect.
  location.assign(next.startsWith('/') && !next.startsWith('//') ? next : '/');
});
`;
const SCRIPT_HASH = createHash('sha256').update(SCRIPT).digest('base64');
const STYLE = 'body{font-family:system-ui,sans-serif;max-width:24rem;margin:4rem auto;padding:0 1rem}label{display:block;margin:.75rem 0 .25rem}input{width:100%;padding:.4rem;box-sizing:border-box}button{margin-top:1rem;padding:.5rem 1rem}#message{color:#b00020}';
const STYLE_HASH = createHash('sha256').update(STYLE).digest('base64');

export function renderLoginPage(): string {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'sha256-${SCRIPT_HASH}'; style-src 'sha256-${STYLE_HASH}'; connect-src 'self'; form-action 'none'; base-uri 'none'">
<meta name="referrer" content="no-referrer">
<title>Log in — svc</title><style>${raw(STYLE)}</style></head>
<body><h1>Log in</h1>
<form id="login"><label for="email">Email or username</label><input id="email" name="email" autocomplete="username" required>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Log in</button><p id="message" role="alert"></p></form>
<script>${raw(SCRIPT)}</script></body></html>`.toString();
}

export function loginPageRoutes() {
  const r = new Hono();
  r.get('/login', (c) => c.html(renderLoginPage(), 200, { 'cache-control': 'no-store' }));
  return r;
}
