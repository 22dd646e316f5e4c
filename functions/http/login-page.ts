import { Hono } from 'hono';
import { html } from './html.js';
import { bundledPage } from './page-shell.js';
import { consoleBundle } from './console/static-assets.js';

/**
 * The login page: a password, or an unrestricted API token (how the bootstrap admin, who has no
 * password, gets in). Either is posted to `/api/auth/login` (which sets the session cookie), then
 * the browser goes to `next` (the console's front door `/` by default). The page is markup only; its
 * script is the typed bundle console/browser/login-page.ts, which reads `next` from the query
 * itself, so nothing of the request is put into the page.
 */

const STYLE = 'body{font-family:system-ui,sans-serif;max-width:24rem;margin:4rem auto;padding:0 1rem}label{display:block;margin:.75rem 0 .25rem}input{width:100%;padding:.4rem;box-sizing:border-box}button{margin-top:1rem;padding:.5rem 1rem}#message{color:#b00020}details{margin-top:2rem}summary{cursor:pointer}.hint{color:#555;font-size:.9em}';
export function renderLoginPage(): string {
  return bundledPage(consoleBundle('login-page'), STYLE)(
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
