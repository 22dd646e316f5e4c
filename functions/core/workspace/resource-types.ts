import { z } from 'zod';
import { ApiError, badRequest, conflict, notFound } from '../common/errors.js';
import { createEntity, deleteEntity, getEntityValue, listEntityValues, updateEntity } from '../store/entities.js';
import { parseBody } from '../common/validation.js';
import { withoutWindmillDefaults } from '../common/windmill-only-fields.js';
import { jsonSchemaProblem, jsonSchemaValidator, type JsonSchemaValidator } from '../common/json-schema.js';
import type { Rights } from '../identity/permissions.js';
import type { CoreDeps } from '../deps.js';
import { workspaceAnnouncer } from '../events/announce.js';
import type { ResourceType } from './workspace-documents.js';

type Deps = Pick<CoreDeps, 'store' | 'clock' | 'config'>;

/** Connection (resource) types: a name and the JSON Schema every resource of that type follows. */

/** The database example of spec 2.2, shipped in every workspace. */
export const BUILTIN_RESOURCE_TYPES: readonly ResourceType[] = [
  {
    name: 'postgresql',
    description: 'A PostgreSQL database connection',
    builtin: true,
    schema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: {
        host: { type: 'string', description: 'The instance host' },
        port: { type: 'number', description: 'The instance port', default: 5432 },
        user: { type: 'string', description: 'The postgres username' },
        dbname: { type: 'string', description: 'The database name' },
        sslmode: { type: 'string', enum: ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'], description: 'The SSL mode' },
        password: { type: 'string', description: 'The postgres user password' },
        root_certificate_pem: { type: 'string', description: 'The CA certificate, for verify-ca and verify-full' },
      },
      required: ['host', 'dbname', 'user'],
      order: ['host', 'port', 'user', 'dbname', 'sslmode', 'password', 'root_certificate_pem'],
    },
  },
  {
    name: 'slack',
    description: 'A Slack app, for scripts that call Slack themselves. Chat approvals do not use it: they go through the chat connections a workspace admin sets up (docs/chat-approvals.md). Keep the token and secret in secret variables and reference them: "$var:u/alice/slack_bot_token"',
    builtin: true,
    schema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: {
        bot_token: { type: 'string', minLength: 1, description: 'The bot user OAuth token (xoxb-...), or a $var: reference to a secret variable holding it' },
        signing_secret: { type: 'string', minLength: 1, description: "The app's signing secret, which signs its interaction requests, or a $var: reference" },
        api_url: { type: 'string', description: "The Web API base URL; Slack's own by default", default: 'https://slack.com/api' },
      },
      required: ['bot_token', 'signing_secret'],
      order: ['bot_token', 'signing_secret', 'api_url'],
    },
  },
  {
    name: 'teams',
    description: 'A Microsoft Teams bot (Bot Framework), for scripts that call Teams themselves. Chat approvals do not use it: they go through the chat connections a workspace admin sets up (docs/chat-approvals.md). Keep app_password in a secret variable and reference it',
    builtin: true,
    schema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: {
        app_id: { type: 'string', minLength: 1, description: "The bot's Microsoft App ID: the audience of the tokens Teams signs its calls with" },
        app_password: { type: 'string', minLength: 1, description: "The bot's client secret, or a $var: reference to a secret variable holding it" },
        tenant_id: { type: 'string', description: "The bot's tenant (single-tenant bots); botframework.com by default" },
        team_id: { type: 'string', minLength: 1, description: 'The team whose channels the bot posts to (19:...@thread.tacv2)' },
        team_name: { type: 'string', minLength: 1, description: 'The team name requestInteractiveCollabApproval finds this connection by' },
        service_url: { type: 'string', description: 'The Bot Connector base URL', default: 'https://smba.trafficmanager.net/teams' },
        token_url: { type: 'string', description: "Where the bot gets its tokens; the tenant's Microsoft identity platform endpoint by default" },
        openid_metadata_url: { type: 'string', description: "The Bot Framework's OpenID metadata (the keys Teams signs with)", default: 'https://login.botframework.com/v1/.well-known/openidconfiguration' },
      },
      required: ['app_id', 'app_password', 'team_id', 'team_name'],
      order: ['app_id', 'app_password', 'tenant_id', 'team_id', 'team_name', 'service_url', 'token_url', 'openid_metadata_url'],
    },
  },
  // What Windmill's clients create when a script keeps state (setState) or sets a resource
  // without naming a type (wmill.set_resource): any JSON value (docs/windmill.md).
  { name: 'state', description: "A script's state between runs (getState / setState): any JSON value", builtin: true, schema: {} },
  { name: 'any', description: 'Any JSON value', builtin: true, schema: {} },
];

export const RESOURCE_TYPE_NAME = z.string().regex(/^[a-z][a-z0-9_]{0,99}$/, 'lowercase letters, digits and _, starting with a letter');

const jsonSchema = z.record(z.string(), z.unknown()).superRefine((s, ctx) => {
  const problem = jsonSchemaProblem(s);
  if (problem) ctx.addIssue({ code: 'custom', message: `is not a JSON Schema this service can validate with: ${problem}` });
});

export const createBody = z.strictObject({ name: RESOURCE_TYPE_NAME, schema: jsonSchema, description: z.string().max(10_000).default('') });
export const updateBody = z.strictObject({ schema: jsonSchema.optional(), description: z.string().max(10_000).optional() });

const builtin = (name: string) => BUILTIN_RESOURCE_TYPES.find((t) => t.name === name);
const what = (name: string) => `resource type ${name}`;

export async function createResourceType(deps: Deps, rights: Rights, body: unknown): Promise<ResourceType> {
  rights.check('resources', 'write');
  const input = parseBody(createBody, withoutWindmillDefaults('resource_type', body));
  if (builtin(input.name)) throw conflict(`${what(input.name)} is built in`);
  const type: ResourceType = { name: input.name, schema: input.schema, description: input.description, builtin: false };
  const announce = await workspaceAnnouncer(deps, rights.workspaceId, rights.principal.username);
  return (await createEntity(deps.store, deps.clock, 'resource_type', rights.workspaceId, input.name, type, what(input.name), (e) => announce('CreateResourceType', { kind: 'resource_type', path: e.key, version: e.version }))).value;
}

export async function updateResourceType(deps: Deps, rights: Rights, name: string, body: unknown): Promise<ResourceType> {
  rights.check('resources', 'write');
  if (builtin(name)) throw conflict(`${what(name)} is built in and cannot be changed`);
  const input = parseBody(updateBody, withoutWindmillDefaults('resource_type', body));
  const announce = await workspaceAnnouncer(deps, rights.workspaceId, rights.principal.username);
  const e = await updateEntity(deps.store, deps.clock, 'resource_type', rights.workspaceId, name, what(name), (t) => ({
    ...t,
    schema: input.schema ?? t.schema,
    description: input.description ?? t.description,
  }), (next) => announce('UpdateResourceType', { kind: 'resource_type', path: next.key, version: next.version }));
  return e.value;
}

export async function deleteResourceType(deps: Deps, rights: Rights, name: string): Promise<void> {
  rights.check('resources', 'write');
  // Every resource of the type depends on it (it can no longer be saved without it): workspace admins only, as in Windmill.
  if (rights.role !== 'admin' && rights.role !== 'instance_admin') {
    throw new ApiError(403, 'forbidden', `${rights.principal.username} (${rights.role}) may not delete ${what(name)}: only workspace admins delete resource types`);
  }
  if (builtin(name)) throw conflict(`${what(name)} is built in and cannot be deleted`);
  const announce = await workspaceAnnouncer(deps, rights.workspaceId, rights.principal.username);
  await deleteEntity(deps.store, 'resource_type', rights.workspaceId, name, what(name), announce('DeleteResourceType', { kind: 'resource_type', path: name }));
}

export async function findResourceType(deps: Pick<CoreDeps, 'store'>, workspaceId: string, name: string): Promise<ResourceType | null> {
  return builtin(name) ?? (await getEntityValue(deps.store, 'resource_type', workspaceId, name));
}

export async function getResourceType(deps: Pick<CoreDeps, 'store'>, rights: Rights, name: string): Promise<ResourceType> {
  rights.check('resources', 'read');
  return (await findResourceType(deps, rights.workspaceId, name)) ?? (() => { throw notFound(what(name)); })();
}

export async function listResourceTypes(deps: Pick<CoreDeps, 'store'>, rights: Rights): Promise<ResourceType[]> {
  rights.check('resources', 'read');
  const own = (await listEntityValues(deps.store, 'resource_type', rights.workspaceId)).map((e) => e.value);
  return [...BUILTIN_RESOURCE_TYPES, ...own].sort((a, b) => a.name.localeCompare(b.name));
}

/** 400 naming the first field of `value` that does not follow the type's schema. */
export function validateResourceValue(type: ResourceType, value: unknown): void {
  let validator: JsonSchemaValidator;
  try {
    validator = jsonSchemaValidator(type.schema);
  } catch (e) {
    // Stored before its schema was checked as it is now (a pattern RE2 does not take).
    throw badRequest('invalid_resource', `resource type ${type.name}: its schema cannot validate values: ${e instanceof Error ? e.message : String(e)}`, { field: 'resource_type' });
  }
  const issue = validator.check(value);
  if (!issue) return;
  const field = ['value', ...issue.path.map(String)].join('.');
  throw badRequest('invalid_resource', `${field}: ${issue.message} (resource type ${type.name})`, { field });
}
