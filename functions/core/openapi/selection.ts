import { z } from 'zod';
import type * as Re2 from 're2js';
import { re2 } from '../common/re2.js';
import { badRequest } from '../common/errors.js';
import { parseBody } from '../common/validation.js';

/**
 * What `POST /api/w/<ws>/openapi/generate` takes (issue 21, spec 4.10), and the filters that pick
 * the routes and webhooks the document covers. Every filter value is a regular expression in RE2
 * syntax matched against the whole text; `*` alone means "anything", as Windmill's page writes it.
 * RE2 matches in linear time, so no pattern a caller sends can hold the API busy.
 */

export const OPENAPI_FORMATS = ['json', 'yaml'] as const;
export type OpenApiFormat = (typeof OPENAPI_FORMATS)[number];

const OWNER_KINDS = ['*', 'u', 'f'] as const;
const RUNNABLE_KINDS = ['script', 'flow'] as const;
export type RunnableKind = (typeof RUNNABLE_KINDS)[number];

const pattern = z.string().min(1, 'must not be empty (use * for anything)').max(500);
const httpUrl = z
  .string()
  .max(2048)
  .refine((u) => URL.canParse(u) && ['http:', 'https:'].includes(new URL(u).protocol), 'must be an http(s) URL');

const routeFilter = z.object({ folder_regex: pattern, path_regex: pattern, route_path_regex: pattern }).strict();
const webhookFilter = z
  .object({
    user_or_folder_regex: z.enum(OWNER_KINDS, { message: 'must be * (either), u (a user\'s items) or f (a folder\'s items)' }),
    user_or_folder_regex_value: pattern,
    path: pattern,
    runnable_kind: z.enum(RUNNABLE_KINDS, { message: 'must be script or flow' }),
  })
  .strict();

const info = z
  .object({
    title: z.string().min(1).max(200),
    version: z.string().min(1).max(100),
    description: z.string().max(10_000).optional(),
    contact: z.object({ name: z.string().max(200).optional(), url: httpUrl.optional(), email: z.email().optional() }).strict().optional(),
    license: z.object({ name: z.string().min(1).max(200), identifier: z.string().max(100).optional(), url: httpUrl.optional() }).strict().optional(),
  })
  .strict();
export type OpenApiInfo = z.infer<typeof info>;

export const generateBody = z
  .object({
    info: info.optional(),
    /** The service's public base URL, the document's server; the request's own origin when left out. */
    url: httpUrl.optional(),
    http_route_filters: z.array(routeFilter).max(50).default([]),
    webhook_filters: z.array(webhookFilter).max(50).default([]),
    format: z.enum(OPENAPI_FORMATS, { message: 'must be json or yaml' }).default('json'),
  })
  .strict();

/** Whole-text matchers compiled from the filters, each field checked (400 naming it) before anything is read. */
export interface Selection {
  info: OpenApiInfo | undefined;
  url: string | undefined;
  format: OpenApiFormat;
  /** Whether a route stored at `path` (an item path) serving `routePath` is selected. */
  route(path: string, routePath: string): boolean;
  /** Whether the script or flow at `path` is selected. */
  webhook(kind: RunnableKind, path: string): boolean;
  wantsRoutes: boolean;
  wantsWebhooks: boolean;
}

export function parseSelection(body: unknown): Selection {
  const input = parseBody(generateBody, body);
  if (input.http_route_filters.length === 0 && input.webhook_filters.length === 0) {
    throw badRequest('invalid_request', 'http_route_filters, webhook_filters: give at least one filter (e.g. {"folder_regex":"*","path_regex":"*","route_path_regex":"*"})', { field: 'http_route_filters' });
  }
  const routes = input.http_route_filters.map((f, i) => {
    const field = (name: string) => `http_route_filters.${i}.${name}`;
    return { folder: matcher(f.folder_regex, field('folder_regex')), path: matcher(f.path_regex, field('path_regex')), routePath: matcher(f.route_path_regex, field('route_path_regex')), anyFolder: f.folder_regex === '*' };
  });
  const webhooks = input.webhook_filters.map((f, i) => {
    const field = (name: string) => `webhook_filters.${i}.${name}`;
    return { owner: f.user_or_folder_regex, name: matcher(f.user_or_folder_regex_value, field('user_or_folder_regex_value')), rest: matcher(f.path, field('path')), kind: f.runnable_kind };
  });
  return {
    info: input.info,
    url: input.url,
    format: input.format,
    wantsRoutes: routes.length > 0,
    wantsWebhooks: webhooks.length > 0,
    route(path, routePath) {
      const { kind, owner, rest } = splitItemPath(path);
      // A route kept in a user's space has no folder: only a filter that takes any folder selects it.
      return routes.some((f) => (kind === 'f' ? f.folder(owner) : f.anyFolder) && f.path(rest) && f.routePath(routePath));
    },
    webhook(kind, path) {
      const parts = splitItemPath(path);
      return webhooks.some((f) => f.kind === kind && (f.owner === '*' || f.owner === parts.kind) && f.name(parts.owner) && f.rest(parts.rest));
    },
  };
}

/** `f/shop/orders/new` -> f, shop, orders/new. */
function splitItemPath(path: string): { kind: string; owner: string; rest: string } {
  const [kind, owner, ...rest] = path.split('/');
  return { kind, owner, rest: rest.join('/') };
}

function matcher(source: string, field: string): (text: string) => boolean {
  if (source === '*') return () => true;
  let compiled: Re2.RE2JS;
  try {
    compiled = re2.RE2JS.compile(source);
  } catch (e) {
    if (!(e instanceof re2.RE2JSException)) throw e;
    throw badRequest('invalid_request', `${field}: not a regular expression (RE2 syntax): ${e.message}`, { field });
  }
  return (text) => compiled.matches(text);
}
