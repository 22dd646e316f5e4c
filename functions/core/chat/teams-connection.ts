import { ApiError, badRequest } from '../errors.js';
import type { Rights } from '../permissions.js';
import type { CoreDeps } from '../deps.js';
import { readChatConnectionFields } from './chat-connection.js';

/**
 * A `teams` connection (README: Chat approvals): a Bot Framework bot's app id and password, the
 * team it posts to, and the platform's endpoints (its own unless a test points them at a fake).
 * Read like a slack connection: with the identity that acts, `$var:` references resolved.
 */

export interface TeamsConnection {
  path: string;
  appId: string;
  appPassword: string;
  teamId: string;
  teamName: string;
  serviceUrl: string;
  tokenUrl: string;
  openidMetadataUrl: string;
}

export async function readTeamsConnection(deps: Pick<CoreDeps, 'store' | 'cipher'>, rights: Rights, path: string): Promise<TeamsConnection> {
  const v = await readChatConnectionFields(deps, rights, path, 'teams', (actual) => badRequest('invalid_request', `${path} is a ${actual} connection, not a teams one`));
  const str = (name: string, fallback?: string): string => {
    const x = v[name] ?? fallback;
    if (typeof x !== 'string' || !x) throw new ApiError(400, 'invalid_resource', `connection ${path} needs a string ${name}`);
    return x.replace(/\/+$/, '');
  };
  const tenant = typeof v.tenant_id === 'string' && v.tenant_id ? v.tenant_id : 'botframework.com';
  return {
    path,
    appId: str('app_id'),
    appPassword: str('app_password'),
    teamId: str('team_id'),
    teamName: str('team_name'),
    serviceUrl: str('service_url', 'https://smba.trafficmanager.net/teams'),
    tokenUrl: str('token_url', `https://login.microsoftonline.com/${encodeURIComponent(tenant)}/oauth2/v2.0/token`),
    openidMetadataUrl: str('openid_metadata_url', 'https://login.botframework.com/v1/.well-known/openidconfiguration'),
  };
}
