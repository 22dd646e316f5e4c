import { Hono } from 'hono';
import { html } from './html.js';
import { staticPage } from './page-shell.js';

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
const STYLE = 'body{font-family:system-ui,sans-serif;max-width:24rem;margin:4rem auto;padding:0 1rem}label{display:block;margin:.75rem 0 .25rem}input{width:100%;padding:.4rem;box-sizing:border-box}button{margin-top:1rem;padding:.5rem 1rem}#message{color:#b00020}';
const PAGE = staticPage(SCRIPT, STYLE);

export function renderLoginPage(): string {
  return PAGE(
    'Log in — svc',
    html`<body><h1>Log in</h1>
<form id="login"><label for="email">Email or username</label><input id="email" name="email" autocomplete="username" required>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Log in</button><p id="message" role="alert"></p></form>`,
  );
}

export function loginPageRoutes() {
  const r = new Hono();
  r.get('/login', (c) => c.html(renderLoginPage(), 200, { 'cache-control': 'no-store' }));
  return r;
}
