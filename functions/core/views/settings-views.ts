import { z } from 'zod';
import type { Assignable, Same } from './same.js';
import type { Workspace } from '../../ports.js';
import type { DeliveryView as CoreDeliveryView } from '../events/deliveries.js';
import type { editWorkspaceWebhook } from '../events/webhook-settings.js';
import type { getInstanceWebhook } from '../events/instance-webhook.js';
import type { setErrorHandler } from '../workspace/workspace-error-handler.js';
import type { RoutePrefixView } from '../triggers/route-prefix.js';
import type { getSyncKey } from '../workspace/sync-key.js';
import type { RetentionView } from '../console/retention.js';
import type { ChatConnectionView } from '../chat/chat-settings.js';

/**
 * A workspace's settings and its events as the API answers them: the OpenAPI document describes
 * the answers with these, the CLI reads them with their types, and the checks below fail
 * `npm run check` when what the core answers and these schemas part.
 */

/** `workspaces/list` (each), `workspaces/edit_object_storage`. */
export const workspaceSchema = z.object({ id: z.string(), name: z.string(), created_at: z.string(), object_storage_enabled: z.boolean() });
export type WorkspaceView = z.output<typeof workspaceSchema>;

/** `workspaces/edit_error_handler`; in `get_settings`, null when none is set. */
export const errorHandlerSchema = z.object({ path: z.string().nullable(), extra_args: z.record(z.string(), z.unknown()) });

/** `workspaces/get_settings`: the workspace, its error handler, and (to its admins) its events webhook, never the secret. */
export const workspaceSettingsSchema = workspaceSchema.extend({
  webhook: z.string().optional(),
  has_secret: z.boolean().optional(),
  error_handler: errorHandlerSchema.extend({ path: z.string() }).nullable(),
});
export type WorkspaceSettingsView = z.output<typeof workspaceSettingsSchema>;

/** `workspaces/route_prefix` (GET and POST). */
export const routePrefixSchema = z.object({ prefix: z.string().nullable(), route_base: z.string() });
/** `workspaces/encryption_key` (GET and POST): the sync key. */
export const syncKeySchema = z.object({ key: z.string() });
export type SyncKeyView = z.output<typeof syncKeySchema>;
/** `workspaces/retention` (GET and POST). */
export const retentionSchema = z.object({ max_age_days: z.number().int().nullable(), max_count: z.number().int().optional() });
/** `workspaces/chat_connections` (each), `chat_connections/{name}`: names and flags, never secrets. */
export const chatConnectionSchema = z.looseObject({ name: z.string(), platform: z.enum(['slack', 'teams']), updated_by: z.string() });
export type ChatConnectionListView = z.output<typeof chatConnectionSchema>[];

/** `workspaces/edit_webhook`: the URL and whether requests are signed. */
export const workspaceWebhookSchema = z.object({ webhook: z.string(), has_secret: z.boolean() });
export type WorkspaceWebhookView = z.output<typeof workspaceWebhookSchema>;
/** `settings/instance_events_webhook` (GET and POST). */
export const instanceWebhookSchema = z.object({ url: z.string(), has_secret: z.boolean() });

/** `webhook_deliveries` and `instance_events_deliveries` (each), and their `redeliver`. */
export const deliverySchema = z.object({
  id: z.string(),
  type: z.string(),
  subject: z.string(),
  status: z.enum(['pending', 'delivered', 'failed']),
  created_at: z.string(),
  attempt_count: z.number().int(),
  attempts: z.array(z.object({ at: z.string(), status_code: z.number().int().nullable(), error: z.string().nullable() })),
  last_status_code: z.number().int().nullable(),
  last_error: z.string().nullable(),
  next_attempt_at: z.string().nullable(),
  /** The CloudEvent as sent. */
  event: z.unknown(),
});
export type DeliveryView = z.output<typeof deliverySchema>;

const agree: [
  Same<WorkspaceView, Workspace>,
  Same<z.output<typeof errorHandlerSchema>, Awaited<ReturnType<typeof setErrorHandler>>>,
  Same<z.output<typeof routePrefixSchema>, RoutePrefixView>,
  Same<SyncKeyView, Awaited<ReturnType<typeof getSyncKey>>>,
  Same<z.output<typeof retentionSchema>, RetentionView>,
  Assignable<ChatConnectionView, z.output<typeof chatConnectionSchema>>,
  Same<WorkspaceWebhookView, Awaited<ReturnType<typeof editWorkspaceWebhook>>>,
  Same<z.output<typeof instanceWebhookSchema>, Awaited<ReturnType<typeof getInstanceWebhook>>>,
  Same<DeliveryView, CoreDeliveryView>,
] = [true, true, true, true, true, true, true, true, true];
void agree;
