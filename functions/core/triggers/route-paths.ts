import { badRequest } from '../common/errors.js';

/**
 * The URL syntax of custom HTTP routes (served at `/api/r/<workspace>/<route_path>`): segments of letters,
 * digits and `_ . ~ -`, or `:name` parameters that become the run's arguments. Two routes conflict
 * when they have the same method and the same shape (`orders/:id` and `orders/:order` would answer
 * the same URLs); a static segment beats a parameter at the same place when both match.
 */

export const HTTP_METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

const STATIC_SEGMENT = /^[A-Za-z0-9_.~-]+$/;
const PARAM_SEGMENT = /^:([A-Za-z_][A-Za-z0-9_]*)$/;
const MAX_ROUTE_PATH = 255;

/**
 * `path` without slashes at either end. Not /\/+$/: that tries every slash of a long run as a start,
 * quadratic in the run (a route_path of 200,000 slashes held the service 13 s).
 */
function trimSlashes(path: string): string {
  let start = 0;
  let end = path.length;
  while (start < end && path[start] === '/') start++;
  while (end > start && path[end - 1] === '/') end--;
  return path.slice(start, end);
}

/** The route path without slashes at either end; 400 naming what is wrong. */
export function parseRoutePath(input: string): string {
  const path = trimSlashes(input);
  const invalid = (why: string) => badRequest('invalid_path', `route_path ${JSON.stringify(input)} ${why}`, { field: 'route_path' });
  if (path === '') throw invalid('is empty');
  if (path.length > MAX_ROUTE_PATH) throw invalid(`is longer than ${MAX_ROUTE_PATH} characters`);
  const names = new Set<string>();
  for (const segment of path.split('/')) {
    const param = PARAM_SEGMENT.exec(segment);
    if (param) {
      if (names.has(param[1])) throw invalid(`names the parameter :${param[1]} twice`);
      names.add(param[1]);
    } else if (!STATIC_SEGMENT.test(segment) || segment === '.' || segment === '..') {
      throw invalid(`has the segment ${JSON.stringify(segment)}: use letters, digits, _ . ~ - or :name`);
    }
  }
  return path;
}

/** What two conflicting routes share: the method and the path with every parameter made anonymous. */
export function routeKey(method: HttpMethod, routePath: string): string {
  return `${method} ${routePath.split('/').map((s) => (s.startsWith(':') ? ':' : s)).join('/')}`;
}

/** The parameters of `routePath` taken from `urlPath` (no leading slash), or null when it does not match. */
export function matchRoute(routePath: string, urlPath: string): Record<string, string> | null {
  const pattern = routePath.split('/');
  const actual = trimSlashes(urlPath).split('/');
  if (pattern.length !== actual.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i].startsWith(':')) {
      if (actual[i] === '') return null;
      params[pattern[i].slice(1)] = safeDecode(actual[i]);
    } else if (pattern[i] !== actual[i]) {
      return null;
    }
  }
  return params;
}

/** Orders matching routes so that the most specific (static segments first, left to right) comes first. */
export function bySpecificity(a: string, b: string): number {
  const as = a.split('/');
  const bs = b.split('/');
  for (let i = 0; i < Math.min(as.length, bs.length); i++) {
    const ap = as[i].startsWith(':');
    const bp = bs[i].startsWith(':');
    if (ap !== bp) return ap ? 1 : -1;
  }
  return 0;
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
