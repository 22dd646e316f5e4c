import { Hono } from 'hono';
import { html } from './html.js';
import { staticPage } from './page-shell.js';

/**
 * The login page: a password, or an unrestricted API token (how the bootstrap admin, who has no
 * password, gets in). Either is posted to `/api/auth/login` (which sets the session cookie), then
 * the browser goes to `next` (the console's front door `/` by default).
 */

// Static script: reads `next` from the query itself, so nothing of the request is put into it.
const SCRIPT = `
const message = document.getElementById('message');
async function signIn(body) {
  message.textContent = '';
  const res = await fetch('/api/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), credentials: 'same-origin' });
  if (!res.ok) {
    const answer = await res.json().catch(() => null);
    message.textContent = answer?.error?.message ?? 'login failed';
    return;
  }
  const next = new URLSearchParams(location.search).get('next') ?? '/';
  // Only a path on this site: never an open redirect.
  location.assign(next.startsWith('/') && !next.startsWith('//') ? next : '/');
}
const form = document.getElementById('login');
form.addEventListener('submit', (event) => {
  event.preventDefault();
  signIn({ email: form.email.value, password: form.password.value });
});
const tokenForm = document.getElementById('token-login');
tokenForm.addEventListener('submit', (event) => {
  event.preventDefault();
  signIn({ token: tokenForm.token.value.trim() });
});
`;
const STYLE = 'body{font-family:system-ui,sans-serif;max-width:24rem;margin:4rem auto;padding:0 1rem}label{display:block;margin:.75rem 0 .25rem}input{width:100%;padding:.4rem;box-sizing:border-box}button{margin-top:1rem;padding:.5rem 1rem}#message{color:#b00020}details{margin-top:2rem}summary{cursor:pointer}.hint{color:#555;font-size:.9em}';
const PAGE = staticPage(SCRIPT, STYLE);

export function renderLoginPage(): string {
  return PAGE(
    'Log in — svc',
    html`<body><h1>Log in</h1>
<form id="login"><label for="email">Email or username</label><input id="email" name="email" autocomplete="username" required>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Log in</button></form>
<details><summary>Sign in with an API token</summary>
<form id="token-login"><p class="hint">The admin token the first start printed (on AWS: the stack's admin token secret), or any unrestricted token of yours.</p>
<label for="token">API token</label><input id="token" name="token" type="password" autocomplete="off" required>
<button type="submit">Sign in with token</button></form></details>
<p id="message" role="alert"></p>`,
  );
}

export function loginPageRoutes() {
  const r = new Hono();
  r.get('/login', (c) => c.html(renderLoginPage(), 200, { 'cache-control': 'no-store' }));
  return r;
}
