import { hasWebhook } from './webhook-settings.js';
import { INSTANCE_SCOPE, type InstanceEventType, type WorkspaceEventType } from './event-types.js';
import type { CoreDeps } from '../deps.js';
import type { OutboxEvent } from '../../ports.js';

/**
 * Builds the events a change announces, for the Store to record in the change's own transaction
 * (ports.ts: the `events` argument of its writes). A scope without a webhook records none.
 * The body is a CloudEvents 1.0 structured-mode event (https://cloudevents.io): `data` names the
 * item, the acting user and the new version or hash, never a value (connections and variables
 * hold credentials).
 */

export interface ItemRef {
  /** `script`, `flow`, `app`, `resource`, `resource_type`, `variable`, `folder`, `token`, `user`. */
  kind: string;
  /** The item's path or name: the CloudEvent's `subject`. */
  path: string;
  /** A script version's hash. */
  hash?: string;
  /** A flow's or app's version id, or a document's version number. */
  version?: number;
  /** Anything else the event type says (a token's label and expiry, an invited user's role). */
  extra?: Record<string, unknown>;
}

export type Announce<T extends string> = (type: T, item: ItemRef) => OutboxEvent[];

type AnnounceDeps = Pick<CoreDeps, 'store' | 'clock' | 'config'>;

/** Events of a workspace (table 6.1), by `actor`; `announce` returns [] when the workspace has no webhook. */
export async function workspaceAnnouncer(deps: AnnounceDeps, workspaceId: string, actor: string): Promise<Announce<WorkspaceEventType>> {
  return announcer(deps, workspaceId, actor, `/api/w/${workspaceId}`);
}

/** Events of the instance (6.2). */
export async function instanceAnnouncer(deps: AnnounceDeps, actor: string): Promise<Announce<InstanceEventType>> {
  return announcer(deps, INSTANCE_SCOPE, actor, '/api');
}

async function announcer<T extends string>(deps: AnnounceDeps, scope: string, actor: string, sourcePath: string): Promise<Announce<T>> {
  if (!(await hasWebhook(deps, scope))) return () => [];
  return (type, item) => {
    const now = deps.clock.now();
    const id = newEventId(now);
    const workspace = scope === INSTANCE_SCOPE ? null : scope;
    const data = {
      ...(workspace ? { workspace } : {}),
      kind: item.kind,
      path: item.path,
      user: actor,
      ...(item.hash !== undefined ? { hash: item.hash } : {}),
      ...(item.version !== undefined ? { version: item.version } : {}),
      ...item.extra,
    };
    const body = {
      specversion: '1.0',
      id,
      // The instance's address where it knows it (SVC_BASE_URL / API_BASE_URL), else a relative reference.
      source: `${deps.config.baseInternalUrl}${sourcePath}`,
      type,
      subject: item.path,
      time: now.toISOString(),
      datacontenttype: 'application/json',
      data,
    };
    return [{ id, scope, item: `${item.kind}:${item.path}`, type, body: JSON.stringify(body), created_at: now.toISOString() }];
  };
}

let lastMs = 0;
let sequence = 0;

/**
 * `evt_` + time (base36 ms) + a per-process sequence + randomness: ids sort by creation, so the
 * outbox delivers an item's events in order, and two ids made in one millisecond here still sort
 * in the order they were made.
 */
export function newEventId(at: Date): string {
  const ms = at.getTime();
  if (ms > lastMs) {
    lastMs = ms;
    sequence = 0;
  } else {
    sequence += 1;
  }
  const random = globalThis.crypto.randomUUID().replace(/-/g, '').slice(0, 10);
  return `evt_${lastMs.toString(36).padStart(9, '0')}${sequence.toString(36).padStart(4, '0')}${random}`;
}
