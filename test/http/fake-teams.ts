import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';

/**
 * A fake Microsoft Teams on loopback speaking the Bot Framework's wire format: the identity
 * platform's token endpoint (client credentials), the OpenID metadata and its signing keys, and the
 * connector's REST API (`/v3/teams/{team}/conversations`, `/v3/conversations/{id}/activities`,
 * `.../members/{user}`) with the bot's Bearer token. It signs invokes as the Bot Framework does:
 * RS256 JWTs from api.botframework.com to the bot's app id, naming the serviceUrl.
 */

export interface TeamsUser {
  id: string;
  name: string;
  email: string;
}

export interface TeamsActivity {
  conversation: string;
  id: string;
  activity: any;
}

export interface FakeTeams {
  appId: string;
  appPassword: string;
  teamId: string;
  serviceUrl: string;
  tokenUrl: string;
  openidMetadataUrl: string;
  activities: TeamsActivity[];
  /** The Bot Framework's token for a call to the bot; `key` another key pair's, to forge. */
  sign(claims?: Record<string, unknown>, opts?: { key?: CryptoKey; expiresIn?: string }): Promise<string>;
  /** A key pair Teams does not publish. */
  otherKey(): Promise<CryptoKey>;
  /** How often the OpenID metadata and the signing keys were read. */
  keyReads(): number;
  /** Publishes a new signing key (new kid) and signs with it from now on, as a rotation does. */
  rotateKey(): Promise<void>;
  /** The invoke a click on `verb` of `card` sends, with the card's inputs filled in. */
  invoke(posted: TeamsActivity, verb: string, user: TeamsUser, inputs?: Record<string, string>): Record<string, unknown>;
  close(): Promise<void>;
}

export async function startFakeTeams(users: TeamsUser[], channels: { id: string; name: string | null }[]): Promise<FakeTeams> {
  const appId = '7f1c1e6a-0000-4000-8000-00000000b07';
  const appPassword = `secret-${Math.random().toString(36).slice(2)}`;
  const teamId = '19:team-finance@thread.tacv2';
  const botToken = `bot-${Math.random().toString(36).slice(2)}`;
  let { publicKey, privateKey } = await generateKeyPair('RS256');
  let kid = 'fake-key-1';
  const published = [{ ...(await exportJWK(publicKey)), kid, use: 'sig', alg: 'RS256' }];
  let keyReads = 0;
  const activities: TeamsActivity[] = [];
  let next = 1;

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const url = new URL(req.url ?? '/', 'http://x');
      const reply = (status: number, answer: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(answer));
      };
      if (url.pathname === '/oauth/token' && req.method === 'POST') {
        const form = new URLSearchParams(body);
        if (form.get('grant_type') !== 'client_credentials' || form.get('client_id') !== appId || form.get('client_secret') !== appPassword) return reply(401, { error: 'invalid_client' });
        return reply(200, { token_type: 'Bearer', expires_in: 3600, access_token: botToken });
      }
      if (url.pathname === '/openid' && req.method === 'GET') return reply(200, { issuer: 'https://api.botframework.com', jwks_uri: `${base}/keys`, id_token_signing_alg_values_supported: ['RS256'] });
      if (url.pathname === '/keys' && req.method === 'GET') {
        keyReads++;
        return reply(200, { keys: published });
      }
      if (!url.pathname.startsWith('/connector/v3/')) return reply(404, { error: { code: 'NotFound' } });
      if (req.headers.authorization !== `Bearer ${botToken}`) return reply(401, { error: { code: 'Unauthorized', message: 'bad bot token' } });
      const path = url.pathname.slice('/connector'.length).split('/').map(decodeURIComponent);
      // ['', 'v3', 'teams', team, 'conversations'] | ['', 'v3', 'conversations', id, 'activities', (id)] | [..., 'members', user]
      if (path[2] === 'teams' && path[4] === 'conversations' && req.method === 'GET') {
        if (path[3] !== teamId) return reply(404, { error: { code: 'TeamNotFound' } });
        return reply(200, { conversations: channels });
      }
      if (path[2] === 'conversations' && path[4] === 'activities') {
        if (!channels.some((c) => c.id === path[3])) return reply(404, { error: { code: 'ConversationNotFound' } });
        const activity = JSON.parse(body);
        if (req.method === 'POST') {
          const posted = { conversation: path[3], id: `1700000000${next++}`, activity };
          activities.push(posted);
          return reply(201, { id: posted.id });
        }
        if (req.method === 'PUT') {
          const posted = activities.find((a) => a.conversation === path[3] && a.id === path[5]);
          if (!posted) return reply(404, { error: { code: 'ActivityNotFound' } });
          posted.activity = activity;
          return reply(200, { id: posted.id });
        }
      }
      if (path[2] === 'conversations' && path[4] === 'members' && req.method === 'GET') {
        const user = users.find((u) => u.id === path[5]);
        if (!user) return reply(404, { error: { code: 'MemberNotFound' } });
        return reply(200, { id: user.id, name: user.name, email: user.email, userPrincipalName: user.email, aadObjectId: `aad-${user.id}` });
      }
      return reply(404, { error: { code: 'NotFound' } });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const serviceUrl = `${base}/connector`;

  return {
    appId,
    appPassword,
    teamId,
    serviceUrl,
    tokenUrl: `${base}/oauth/token`,
    openidMetadataUrl: `${base}/openid`,
    activities,
    async sign(claims = {}, opts = {}) {
      return new SignJWT({ serviceurl: serviceUrl, ...claims })
        .setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' })
        .setIssuer(typeof claims.iss === 'string' ? claims.iss : 'https://api.botframework.com')
        .setAudience(typeof claims.aud === 'string' ? claims.aud : appId)
        .setIssuedAt()
        .setExpirationTime(opts.expiresIn ?? '5m')
        .sign(opts.key ?? privateKey);
    },
    async otherKey() {
      return (await generateKeyPair('RS256')).privateKey;
    },
    keyReads: () => keyReads,
    async rotateKey() {
      ({ publicKey, privateKey } = await generateKeyPair('RS256'));
      kid = `fake-key-${published.length + 1}`;
      published.push({ ...(await exportJWK(publicKey)), kid, use: 'sig', alg: 'RS256' });
    },
    invoke(posted, verb, user, inputs = {}) {
      const card = posted.activity.attachments[0].content;
      const action = card.actions.find((a: any) => a.verb === verb);
      return {
        type: 'invoke',
        name: 'adaptiveCard/action',
        id: `f:${next++}`,
        channelId: 'msteams',
        serviceUrl,
        from: { id: user.id, name: user.name, aadObjectId: `aad-${user.id}` },
        conversation: { id: posted.conversation, conversationType: 'channel' },
        recipient: { id: `28:${appId}`, name: 'svc' },
        replyToId: posted.id,
        value: { action: { type: 'Action.Execute', verb, data: { ...action?.data, ...inputs } }, trigger: 'manual' },
      };
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
