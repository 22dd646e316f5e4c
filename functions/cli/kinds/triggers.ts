import { z } from 'zod';
import type { HttpTriggerView, ScheduleView } from '../../core/views/trigger-views.js';
import { mapPool } from '../pool.js';
import { p } from '../remote.js';
import { yamlKind } from './yaml-kind.js';
import { pathFile } from './documents.js';
import type { KindHandler, SyncContext } from '../items.js';

/**
 * HTTP routes (`<path>.http_trigger.yaml`, with `includeTriggers`) and schedules
 * (`<path>.schedule.yaml`, with `includeSchedules`), one YAML file each, with the fields the API
 * takes. The server's defaults are the file's defaults, and a field left null is left out of the
 * file, so a pull followed by a push changes nothing. Routes may be workspace-specific files
 * (`specificItems.triggers`).
 */

type P = Record<string, unknown>;
const parallelOf = (ctx: SyncContext) => ctx.options.parallel ?? 1;

/** Keys whose value is null are not written; reading the file gives them back as null. */
function withoutNulls(payload: P): P {
  const { path: _path, ...rest } = payload;
  return Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== null));
}

function pick(source: P, fields: readonly string[], nullable: readonly string[]): P {
  return Object.fromEntries([...fields.map((k) => [k, source[k]]), ...nullable.map((k) => [k, source[k] ?? null])]);
}

const ROUTE_FIELDS = [
  'route_path',
  'http_method',
  'script_path',
  'is_flow',
  'is_async',
  'authentication_method',
  'summary',
  'description',
  'wrap_body',
  'raw_string',
] as const;
const ROUTE_NULLABLE = ['api_key_header', 'signature_header', 'secret_variable', 'basic_auth_resource', 'inject_token_variable'] as const;

const routeFile = z.strictObject({
  route_path: z.string().min(1),
  http_method: z.enum(['get', 'post', 'put', 'delete', 'patch']),
  script_path: z.string().min(1),
  is_flow: z.boolean().default(false),
  is_async: z.boolean().default(false),
  authentication_method: z.enum(['svc', 'none', 'api_key', 'basic', 'signature']).default('svc'),
  summary: z.string().default(''),
  description: z.string().default(''),
  wrap_body: z.boolean().default(false),
  raw_string: z.boolean().default(false),
  api_key_header: z.string().nullish(),
  signature_header: z.string().nullish(),
  secret_variable: z.string().nullish(),
  basic_auth_resource: z.string().nullish(),
  inject_token_variable: z.string().nullish(),
});

export const httpTriggers: KindHandler = yamlKind({
  kind: 'http_trigger',
  enabled: (o) => o.includeTriggers === true,
  async list(ctx) {
    const listed = await ctx.remote.get<HttpTriggerView[]>('/http_triggers/list');
    return mapPool(listed, parallelOf(ctx), async (t) => ({
      id: t.path,
      owner: t.created_by,
      payload: { path: t.path, ...pick(t, ROUTE_FIELDS, ROUTE_NULLABLE) },
    }));
  },
  ...pathFile('http_trigger', 'triggers'),
  schema: routeFile,
  order: [...ROUTE_FIELDS, ...ROUTE_NULLABLE],
  toFile: withoutNulls,
  fromFile: (id, d) => ({ path: id, ...pick(d, ROUTE_FIELDS, ROUTE_NULLABLE) }),
  create: async (t, ctx) => void (await ctx.remote.post('/http_triggers/create', t)),
  update: async (t, ctx) => void (await ctx.remote.post(`/http_triggers/update/${p(t.path as string)}`, t)),
  remove: async (id, ctx) => void (await ctx.remote.delete(`/http_triggers/delete/${p(id)}`)),
});

/** The failure and recovery handlers' settings, left out of a file while they are the defaults. */
const SCHEDULE_HANDLER_DEFAULTS: P = { on_failure_times: 1, on_failure_exact: false, on_failure_extra_args: {}, on_recovery_times: 1, on_recovery_extra_args: {} };
const SCHEDULE_FIELDS = ['schedule', 'timezone', 'script_path', 'is_flow', 'args', 'enabled', 'summary', ...Object.keys(SCHEDULE_HANDLER_DEFAULTS)] as const;
const SCHEDULE_NULLABLE = ['on_failure', 'on_recovery'] as const;

function withoutHandlerDefaults(payload: P): P {
  return Object.fromEntries(Object.entries(payload).filter(([k, v]) => !(k in SCHEDULE_HANDLER_DEFAULTS) || JSON.stringify(v) !== JSON.stringify(SCHEDULE_HANDLER_DEFAULTS[k])));
}

const scheduleFile = z.strictObject({
  schedule: z.string().min(1),
  timezone: z.string().min(1).default('UTC'),
  script_path: z.string().min(1),
  is_flow: z.boolean().default(false),
  args: z.record(z.string(), z.unknown()).default({}),
  enabled: z.boolean().default(true),
  summary: z.string().default(''),
  on_failure: z.string().min(1).nullish(),
  on_failure_times: z.number().int().min(1).default(1),
  on_failure_exact: z.boolean().default(false),
  on_failure_extra_args: z.record(z.string(), z.unknown()).default({}),
  on_recovery: z.string().min(1).nullish(),
  on_recovery_times: z.number().int().min(1).default(1),
  on_recovery_extra_args: z.record(z.string(), z.unknown()).default({}),
});

export const schedules: KindHandler = yamlKind({
  kind: 'schedule',
  enabled: (o) => o.includeSchedules === true,
  async list(ctx) {
    const listed = await ctx.remote.get<ScheduleView[]>('/schedules/list');
    return listed.map((s) => ({
      id: s.path,
      owner: s.created_by,
      payload: { path: s.path, ...pick(s, SCHEDULE_FIELDS, SCHEDULE_NULLABLE) },
    }));
  },
  file: (id) => `${id}.schedule.yaml`,
  claim: (file) => (file.endsWith('.schedule.yaml') && /^[uf]\//.test(file) ? file.slice(0, -'.schedule.yaml'.length) : null),
  schema: scheduleFile,
  order: [...SCHEDULE_FIELDS, ...SCHEDULE_NULLABLE],
  toFile: (d) => withoutHandlerDefaults(withoutNulls(d)),
  fromFile: (id, d) => ({ path: id, ...pick(d, SCHEDULE_FIELDS, SCHEDULE_NULLABLE) }),
  create: async (s, ctx) => void (await ctx.remote.post('/schedules/create', s)),
  update: async (s, ctx) => void (await ctx.remote.post(`/schedules/update/${p(s.path as string)}`, s)),
  remove: async (id, ctx) => void (await ctx.remote.delete(`/schedules/delete/${p(id)}`)),
});
