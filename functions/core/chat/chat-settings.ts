import { z } from 'zod';
import { ApiError, badRequest } from '../common/errors.js';
import { parseBody } from '../common/validation.js';
import { deleteEntity, getEntityValue, listEntityValues, tryCreateEntity, updateEntity } from '../store/entities.js';
import { assertPerson } from '../approvals/approval-rules.js';
import { audit } from '../identity/login-throttle.js';
import type { ChatConnectionSetting } from '../documents/entity-values.js';
import type { Rights } from '../identity/permissions.js';
import type { CoreDeps } from '../deps.js';

/**
 * A workspace's chat connections (README: Chat approvals): the Slack apps and Teams bots its
 * approvals are posted and decided through, connected by a workspace admin in the workspace
 * settings. They hold what proves who decided (Slack's signing secret, the bot token that looks up
 * a clicking user's email, the Web API base; a bot's app id and password, the Bot Framework's
 * OpenID metadata, the connector): a flow only names a connection, so no author can point a
 * callback's verification at a server of their own. Secrets are sealed with the instance's
 * SecretCipher, bound to the workspace and name, and never shown again.
 */

export const CHAT_CONNECTION_NAME = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,49}$/, 'lowercase letters, digits, _ and - (at most 50)');

const httpUrl = z
  .string()
  .max(2000)
  .refine((u) => {
    try {
      const url = new URL(u);
      return (url.protocol === 'https:' || url.protocol === 'http:') && url.username === '' && url.password === '';
    } catch {
      return false;
    }
  }, 'an http:// or https:// URL')
  .transform((u) => u.replace(/\/+$/, ''));

// Sealed as UTF-8 (adapters/aes-gcm.ts), which has no lone surrogate (`"\ud800"` in JSON).
const secret = z.string().min(1).max(500).refine((v) => !/\p{Cs}/u.test(v), 'well-formed Unicode text (no lone surrogate)');

const slackInput = z
  .object({ platform: z.literal('slack'), bot_token: secret.optional(), signing_secret: secret.optional(), api_url: httpUrl.default('https://slack.com/api') })
  .strict();
const teamsInput = z
  .object({
    platform: z.literal('teams'),
    app_id: z.string().min(1).max(200),
    app_password: secret.optional(),
    tenant_id: z.string().min(1).max(200).optional(),
    team_id: z.string().min(1).max(300),
    team_name: z.string().min(1).max(200),
    service_url: httpUrl.default('https://smba.trafficmanager.net/teams'),
    token_url: httpUrl.optional(),
    openid_metadata_url: httpUrl.default('https://login.botframework.com/v1/.well-known/openidconfiguration'),
  })
  .strict();
export const chatConnectionInput = z.discriminatedUnion('platform', [slackInput, teamsInput]);


export interface SlackConnection {
  platform: 'slack';
  name: string;
  botToken: string;
  signingSecret: string;
  apiUrl: string;
}

export interface TeamsConnection {
  platform: 'teams';
  name: string;
  appId: string;
  appPassword: string;
  teamId: string;
  teamName: string;
  serviceUrl: string;
  tokenUrl: string;
  openidMetadataUrl: string;
}

export type ChatConnection = SlackConnection | TeamsConnection;

/** What the settings show: everything but the secrets, and whether each is set. */
export type ChatConnectionView = { name: string; platform: 'slack' | 'teams'; updated_by: string } & Record<string, unknown>;

type Deps = Pick<CoreDeps, 'store' | 'clock' | 'cipher'>;
const KIND = 'chat_connection';
const sealContext = (workspaceId: string, name: string, field: string) => ({ chat_connection: `${workspaceId}/${name}`, field });

/**
 * Connecting a chat platform is a workspace admin's act, made as a person: never with a job's
 * token (a script an admin runs must not re-point the workspace's approvals) nor a scoped one.
 */
async function requireChatAdmin(deps: Pick<CoreDeps, 'store'>, rights: Rights): Promise<void> {
  rights.check('workspaces', 'write');
  await assertPerson(deps, rights.principal, rights.workspaceId);
}

/** Creates or replaces connection `name`; a secret left out keeps the stored one (required on create). */
export async function setChatConnection(deps: Deps, rights: Rights, name: string, body: unknown): Promise<ChatConnectionView> {
  await requireChatAdmin(deps, rights);
  // Checked as the field `name` (it comes from the URL), so a bad one is reported by that name, not as the body.
  const validName = parseBody(z.object({ name: CHAT_CONNECTION_NAME }), { name }).name;
  const input = parseBody(chatConnectionInput, body);
  const ws = rights.workspaceId;
  const current = await getEntityValue(deps.store, KIND, ws, validName);
  const same = current?.platform === input.platform ? current : null;
  const seal = async (field: string, given: string | undefined, kept: string | undefined): Promise<string> => {
    if (given) return deps.cipher.encrypt(given, sealContext(ws, validName, field));
    if (kept) return kept;
    throw badRequest('invalid_request', `${field}: required for a new ${input.platform} connection`, { field });
  };
  const by = rights.principal.username;
  const value: ChatConnectionSetting =
    input.platform === 'slack'
      ? {
          platform: 'slack',
          bot_token: await seal('bot_token', input.bot_token, same?.platform === 'slack' ? same.bot_token : undefined),
          signing_secret: await seal('signing_secret', input.signing_secret, same?.platform === 'slack' ? same.signing_secret : undefined),
          api_url: input.api_url,
          updated_by: by,
        }
      : {
          platform: 'teams',
          app_id: input.app_id,
          app_password: await seal('app_password', input.app_password, same?.platform === 'teams' ? same.app_password : undefined),
          team_id: input.team_id,
          team_name: input.team_name,
          service_url: input.service_url,
          token_url: input.token_url ?? `https://login.microsoftonline.com/${encodeURIComponent(input.tenant_id ?? 'botframework.com')}/oauth2/v2.0/token`,
          openid_metadata_url: input.openid_metadata_url,
          updated_by: by,
        };
  if (!(await tryCreateEntity(deps.store, deps.clock, KIND, ws, validName, value))) {
    await updateEntity(deps.store, deps.clock, KIND, ws, validName, `chat connection ${validName}`, () => value);
  }
  // Who re-points a workspace's approvals is on the instance's audit log (never a secret).
  const shown = view(validName, value);
  await audit(deps, 'chat_connection.set', { workspace_id: ws, name: validName, platform: input.platform, by, ...(input.platform === 'slack' ? { api_url: input.api_url } : { service_url: value.platform === 'teams' ? value.service_url : null }) });
  return shown;
}

export async function deleteChatConnection(deps: Pick<CoreDeps, 'store' | 'clock'>, rights: Rights, name: string): Promise<void> {
  await requireChatAdmin(deps, rights);
  await deleteEntity(deps.store, KIND, rights.workspaceId, name, `chat connection ${name}`);
  await audit(deps, 'chat_connection.delete', { workspace_id: rights.workspaceId, name, by: rights.principal.username });
}

/** Every member may see which connections there are (to name one in a flow), never a secret. */
export async function listChatConnections(deps: Pick<CoreDeps, 'store'>, rights: Rights): Promise<ChatConnectionView[]> {
  rights.check('workspaces', 'read');
  return (await listEntityValues(deps.store, KIND, rights.workspaceId)).map((e) => view(e.key, e.value));
}

function view(name: string, v: ChatConnectionSetting): ChatConnectionView {
  if (v.platform === 'slack') return { name, platform: 'slack', api_url: v.api_url, has_bot_token: true, has_signing_secret: true, updated_by: v.updated_by };
  const { app_password: _sealed, ...shown } = v;
  return { name, ...shown, has_app_password: true };
}

/** The platform of connection `name`, without opening its secrets; null when there is none. */
export async function chatConnectionPlatform(deps: Pick<CoreDeps, 'store'>, workspaceId: string, name: string): Promise<ChatConnection['platform'] | null> {
  return (await getEntityValue(deps.store, KIND, workspaceId, name))?.platform ?? null;
}

/** Connection `name` of the workspace with its secrets opened, for the service's own use; null when there is none. */
export async function findChatConnection(deps: Pick<CoreDeps, 'store' | 'cipher'>, workspaceId: string, name: string): Promise<ChatConnection | null> {
  const v = await getEntityValue(deps.store, KIND, workspaceId, name);
  return v ? open(deps, workspaceId, name, v) : null;
}

/** Every connection of the platform in the workspace, opened (a callback is checked against them). */
export async function chatConnectionsOf<P extends ChatConnection['platform']>(deps: Pick<CoreDeps, 'store' | 'cipher'>, workspaceId: string, platform: P): Promise<Extract<ChatConnection, { platform: P }>[]> {
  const found = (await listEntityValues(deps.store, KIND, workspaceId)).filter((e) => e.value.platform === platform);
  return Promise.all(found.map(async (e) => (await open(deps, workspaceId, e.key, e.value)) as Extract<ChatConnection, { platform: P }>));
}

/** Connection `name`, which must be of `platform`: 400 naming `field` otherwise (a flow's or a client call's mistake). */
export async function requireChatConnection<P extends ChatConnection['platform']>(
  deps: Pick<CoreDeps, 'store' | 'cipher'>,
  workspaceId: string,
  name: string,
  platform: P,
  field: string,
): Promise<Extract<ChatConnection, { platform: P }>> {
  const conn = await findChatConnection(deps, workspaceId, name);
  if (!conn) throw badRequest('invalid_request', `${field}: workspace ${workspaceId} has no chat connection ${name} (a workspace admin connects chat platforms in the workspace settings)`, { field });
  if (conn.platform !== platform) throw badRequest('invalid_request', `${field}: chat connection ${name} is a ${conn.platform} one, not ${platform}`, { field });
  return conn as Extract<ChatConnection, { platform: P }>;
}

async function open(deps: Pick<CoreDeps, 'cipher'>, workspaceId: string, name: string, v: ChatConnectionSetting): Promise<ChatConnection> {
  const unseal = (field: string, sealed: string) =>
    deps.cipher.decrypt(sealed, sealContext(workspaceId, name, field)).catch(() => {
      throw new ApiError(503, 'misconfigured', `the ${field} of chat connection ${name} could not be opened`);
    });
  if (v.platform === 'slack') {
    return { platform: 'slack', name, botToken: await unseal('bot_token', v.bot_token), signingSecret: await unseal('signing_secret', v.signing_secret), apiUrl: v.api_url };
  }
  return {
    platform: 'teams',
    name,
    appId: v.app_id,
    appPassword: await unseal('app_password', v.app_password),
    teamId: v.team_id,
    teamName: v.team_name,
    serviceUrl: v.service_url,
    tokenUrl: v.token_url,
    openidMetadataUrl: v.openid_metadata_url,
  };
}
