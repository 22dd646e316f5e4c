import { signIn } from './console-api.js';
import { byId, messageOf } from './page-helpers.js';

/**
 * The login page (`/login`, login-page.ts renders its shell): a password or an API token is posted
 * through the typed API client (its body typed by the schemas `/api/auth/login` validates with),
 * the refusal is shown, and on success the browser goes to `next`. Bundled by bin/build.js
 * (console-assets/login-page.js).
 */

const message = byId('message');
const form = byId<HTMLFormElement>('login');
const tokenForm = byId<HTMLFormElement>('token-login');
const input = (f: HTMLFormElement, name: string) => f.elements.namedItem(name) as HTMLInputElement;

/**
 * Where to go once signed in: `next` from the query, only a URL of this site (never an open
 * redirect). Resolved the way the browser will resolve it, since a prefix check is not enough:
 * "/\evil.example" starts with one slash, yet the URL parser reads the backslash as a slash.
 * Never an API URL either: this navigation is the site's own, so it carries the new session and
 * passes the same-origin check, and some GETs act (`jobs/run_wait_result/...?payload=` starts a
 * job): a link to the login page would otherwise make whoever signs in run what it names. The
 * server decodes the path before routing (`/%61pi/...` is `/api/...`), so the check does too.
 */
function nextPath(): string {
  const next = new URL(new URLSearchParams(location.search).get('next') ?? '/', location.origin);
  if (next.origin !== location.origin) return '/';
  let path: string;
  try {
    path = decodeURIComponent(next.pathname);
  } catch {
    return '/';
  }
  return /^\/+api(\/|$)/i.test(path) ? '/' : next.pathname + next.search + next.hash;
}

function submit(body: Parameters<typeof signIn>[0]): void {
  message.textContent = '';
  signIn(body)
    .then(() => location.assign(nextPath()))
    .catch((error: unknown) => (message.textContent = messageOf(error)));
}

form.addEventListener('submit', (event) => {
  event.preventDefault();
  submit({ email: input(form, 'email').value, password: input(form, 'password').value });
});
tokenForm.addEventListener('submit', (event) => {
  event.preventDefault();
  submit({ token: input(tokenForm, 'token').value.trim() });
});
