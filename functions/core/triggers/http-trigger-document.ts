import { z } from 'zod';
import { HTTP_METHODS } from './route-paths.js';

/**
 * The stored shape of a custom HTTP route (`http_trigger`, keyed by its item path) and of its entry
 * in its workspace's route index (`http_route`, keyed by method and route shape), which is what
 * makes a conflicting route of the same workspace a 409.
 */

export const AUTHENTICATION_METHODS = ['svc', 'none', 'api_key', 'basic', 'signature'] as const;
export type AuthenticationMethod = (typeof AUTHENTICATION_METHODS)[number];

export const httpTriggerValue = z.object({
  path: z.string().min(1),
  route_path: z.string().min(1),
  http_method: z.enum(HTTP_METHODS),
  script_path: z.string().min(1),
  is_flow: z.boolean(),
  is_async: z.boolean(),
  authentication_method: z.enum(AUTHENTICATION_METHODS),
  summary: z.string(),
  description: z.string(),
  wrap_body: z.boolean(),
  raw_string: z.boolean(),
  /** `api_key`: the request header holding the key. */
  api_key_header: z.string().nullable(),
  /** `signature`: the request header holding `sha256=<hex>`. */
  signature_header: z.string().nullable(),
  /** `api_key` and `signature`: the secret variable holding the key or the HMAC secret. */
  secret_variable: z.string().nullable(),
  /** `basic`: the connection whose `username` and `password` callers must send. */
  basic_auth_resource: z.string().nullable(),
  /** The reverse-proxy form: the run goes out as if `Authorization: Bearer <this variable>` had been sent. */
  inject_token_variable: z.string().nullable(),
  /** Who the run acts as for every method but `svc` (and the proxy form): the last one to save the route, narrowed as their token was. */
  permissioned_as: z.string().min(1),
  permissioned_scopes: z.array(z.string()).nullable(),
  created_by: z.string().min(1),
});
export type HttpTrigger = z.infer<typeof httpTriggerValue>;

export const httpRouteIndexValue = z.object({
  workspace_id: z.string().min(1),
  path: z.string().min(1),
  route_path: z.string().min(1),
  http_method: z.enum(HTTP_METHODS),
});
export type HttpRouteIndex = z.infer<typeof httpRouteIndexValue>;

/** A workspace's custom route prefix (`/api/r/<prefix>/...`), kept instance-wide under the prefix itself. */
export const routePrefixValue = z.object({
  prefix: z.string().min(1),
  workspace_id: z.string().min(1),
  assigned_by: z.string().min(1),
});
export type RoutePrefix = z.infer<typeof routePrefixValue>;
