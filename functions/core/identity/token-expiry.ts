import { notifyUser } from './notifications.js';
import type { CoreDeps } from '../deps.js';
import type { OutboxEvent, TokenRecord } from '../../ports.js';
import { workspaceAnnouncer } from '../events/announce.js';
import type { WorkspaceEventType } from '../events/event-types.js';

/**
 * The token lifecycle of spec 3 and 5.8: a token's owner hears 7 days before it expires, and again
 * once it has expired and been deleted. Expired tokens are refused from the first instant anyway
 * (auth.ts); this sweep, run every so often by each shell (a timer locally, a schedule on AWS),
 * deletes them and sends the notices. Browser sessions are cleared without a word.
 */

export const EXPIRY_NOTICE_DAYS = 7;
const DAY_MS = 24 * 3600 * 1000;

export interface SweepReport {
  noticed: number;
  deleted: number;
}

export async function sweepTokens(deps: Pick<CoreDeps, 'store' | 'clock' | 'email' | 'config'>): Promise<SweepReport> {
  const report: SweepReport = { noticed: 0, deleted: 0 };
  for (const user of await deps.store.listUsers()) {
    for (const token of await deps.store.listTokens(user.username)) {
      if (token.expires_at === null) continue;
      const now = deps.clock.now();
      const expires = Date.parse(token.expires_at);
      if (expires <= now.getTime()) {
        await deps.store.deleteToken(token.token_hash, token.kind === 'api' ? await tokenEvents(deps, 'TokenExpired', token) : []);
        report.deleted += 1;
        if (token.kind === 'api') await notifyUser(deps, token.owner, expiredNotice(token));
      } else if (token.kind === 'api' && !token.expiry_notice_at && expires - now.getTime() <= EXPIRY_NOTICE_DAYS * DAY_MS) {
        // Told first, marked after: a crash in between repeats the notice rather than losing it.
        // Marking never brings back a token its owner deleted meanwhile.
        if (!(await deps.store.getToken(token.token_hash))) continue;
        await notifyUser(deps, token.owner, expiringNotice(token));
        if (await deps.store.markTokenExpiryNotice(token.token_hash, now.toISOString(), await tokenEvents(deps, 'TokenExpiringSoon', token))) report.noticed += 1;
      }
    }
  }
  return report;
}

/**
 * The webhook events of a token's expiry (table 6.1), in each workspace the token works in: its own
 * workspace when it is limited to one, else every workspace its owner belongs to. The event names
 * the token by label and owner, never by any part of its value.
 */
async function tokenEvents(deps: Pick<CoreDeps, 'store' | 'clock' | 'config'>, type: Extract<WorkspaceEventType, 'TokenExpired' | 'TokenExpiringSoon'>, token: TokenRecord): Promise<OutboxEvent[]> {
  const workspaces = token.workspace_id ? [token.workspace_id] : (await deps.store.listMemberWorkspaces(token.owner)).map((w) => w.id);
  const events: OutboxEvent[] = [];
  for (const ws of workspaces) {
    const announce = await workspaceAnnouncer(deps, ws, token.owner);
    events.push(...announce(type, { kind: 'token', path: token.label, extra: { owner: token.owner, expires_at: token.expires_at } }));
  }
  return events;
}

/** Label and prefix (never more of the token): enough for its owner to know which one it is. */
function named(token: TokenRecord): string {
  return `"${token.label}" (${token.prefix}...)`;
}

function expiringNotice(token: TokenRecord) {
  return {
    subject: `Your svc token "${token.label}" expires on ${token.expires_at?.slice(0, 10)}`,
    text: `Your API token ${named(token)} expires at ${token.expires_at}. Create a new one before then and replace it wherever it is used; after that it stops working and is deleted.`,
  };
}

function expiredNotice(token: TokenRecord) {
  return {
    subject: `Your svc token "${token.label}" expired and was deleted`,
    text: `Your API token ${named(token)} expired at ${token.expires_at} and has been deleted. Requests that still use it are refused.`,
  };
}
