import { badRequest } from '../common/errors.js';
import { re2 } from '../common/re2.js';

/**
 * Token scopes (spec 2.8, 5.2). A scope is `<domain>:<action>[:<pattern>]`:
 *
 * - domain: scripts, flows, apps, jobs, resources, variables, folders, groups, workspaces, http_triggers, schedules or `*`
 * - action: read, write, run, cancel or `*`; `write` includes `read`; on `jobs`, `run` and `cancel`
 *   include reading the jobs they apply to
 * - pattern: a glob over item paths (`f/ops/*`, `u/alice/**`), folder or group names; none means all.
 *   `*` is any run of characters but `/`, `?` one of them, `**` as a whole segment any number of
 *   segments (none included); any other character stands for itself
 *
 * `jobs:run:f/ops/deploy` is a webhook-specific token: it runs that one script or flow and reads
 * its jobs, with its creator's permissions on it, and nothing else. A scoped token never manages
 * users or tokens.
 */

export const SCOPE_DOMAINS = ['scripts', 'flows', 'apps', 'jobs', 'resources', 'variables', 'folders', 'groups', 'workspaces', 'http_triggers', 'schedules'] as const;
export const SCOPE_ACTIONS = ['read', 'write', 'run', 'cancel'] as const;

export type Domain = (typeof SCOPE_DOMAINS)[number] | 'users' | 'tokens';
export type Verb = (typeof SCOPE_ACTIONS)[number];

export interface Scope {
  domain: Domain | '*';
  action: Verb | '*';
  matches: (path: string) => boolean;
  text: string;
}

const SHAPE = /^([a-z_*]+):([a-z*]+)(?::(.+))?$/;

export function parseScope(text: string): Scope {
  const m = SHAPE.exec(text);
  const domain = m?.[1];
  const action = m?.[2];
  if (!m || !(domain === '*' || (SCOPE_DOMAINS as readonly string[]).includes(domain!)) || !(action === '*' || (SCOPE_ACTIONS as readonly string[]).includes(action!))) {
    throw badRequest(
      'invalid_scope',
      `scope ${JSON.stringify(text)} must be <domain>:<action>[:<pattern>] with domain one of ${SCOPE_DOMAINS.join(', ')} or *, and action one of ${SCOPE_ACTIONS.join(', ')} or *`,
      { field: 'scopes' },
    );
  }
  const pattern = m[3];
  const matches = pattern ? globMatcher(pattern) : () => true;
  return { domain: domain as Scope['domain'], action: action as Scope['action'], matches, text };
}

const escapeRe2 = (text: string) => text.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');

/**
 * A glob as a matcher that runs on RE2, in linear time. The token's owner writes the pattern and the
 * caller the path, checked on every request: picomatch's backtracking expression for
 * `*a*a*a*a*a*a*a*a*a*a*b` took 24 s against a path of 40 `a`s, with every request waiting.
 * A path with a `.` or `..` segment matches nothing, as picomatch's `dot` option had it.
 */
function globMatcher(pattern: string): (path: string) => boolean {
  const segments = pattern.split('/');
  let source = '';
  segments.forEach((segment, i) => {
    const last = i === segments.length - 1;
    if (segment === '**') {
      // Any number of segments: at the end, the path above included (`u/alice/**` is u/alice and below).
      source += last ? (i === 0 ? '.*' : '(?:/.*)?') : '(?:[^/]*/)*';
      return;
    }
    // A lone `*` is one segment, never an empty one.
    const glob = segment === '*' ? '[^/]+' : segment.split(/(\*+|\?)/).map((part) => (part === '?' ? '[^/]' : part.startsWith('*') ? '[^/]*' : escapeRe2(part))).join('');
    source += glob + (last || (i === segments.length - 2 && segments[i + 1] === '**') ? '' : '/');
  });
  const compiled = re2.RE2JS.compile(source);
  return (path) => !path.split('/').some((s) => s === '.' || s === '..') && compiled.matches(path);
}

export function parseScopes(texts: readonly string[]): Scope[] {
  return texts.map(parseScope);
}

/** Whether one of the scopes allows `action` on `domain` (for `path`, when the access has one). */
export function scopesAllow(scopes: readonly Scope[], domain: Domain, action: Verb, path: string | null): boolean {
  return scopes.some(
    (s) => (s.domain === domain || (s.domain === '*' && (SCOPE_DOMAINS as readonly string[]).includes(domain))) && actionCovers(s.action, action, domain) && (path === null || s.matches(path)),
  );
}

function actionCovers(granted: Scope['action'], wanted: Verb, domain: Domain): boolean {
  if (granted === '*' || granted === wanted) return true;
  if (wanted !== 'read') return false;
  return granted === 'write' || (domain === 'jobs' && (granted === 'run' || granted === 'cancel'));
}
