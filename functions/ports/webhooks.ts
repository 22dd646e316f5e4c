/**
 * The webhook port: the outbox events the Store writes with the changes they announce, their
 * deliveries, and the SSRF-guarded sender. Re-exported by ../ports.ts.
 */

/**
 * An event for a webhook (spec 6.1, 6.2), recorded by the Store in the same transaction as the
 * change it announces (the `events` argument of the writes above) and delivered at least once.
 */
export interface OutboxEvent {
  /** Unique and increasing with creation time: the order of delivery, the CloudEvent id and `webhook-id`. */
  id: string;
  /** The workspace whose webhook receives it, or `*instance` for the instance events webhook. */
  scope: string;
  /** What order is kept for (`script:f/x/y`): an item's events arrive in the order they happened. */
  item: string;
  /** The event type (table 6.1), e.g. `CreateScript`. */
  type: string;
  /** The CloudEvent, as JSON text: sent as it is on every attempt. */
  body: string;
  created_at: string;
}

export interface DeliveryAttempt {
  at: string;
  /** The receiver's status code; null when no answer came (refused, timed out, blocked address). */
  status_code: number | null;
  error: string | null;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** An outbox event and where its delivery stands. */
export interface Delivery extends OutboxEvent {
  status: DeliveryStatus;
  /** How many attempts were made (the log below keeps the latest ones). */
  attempt_count: number;
  attempts: DeliveryAttempt[];
  /** When it is tried next; also the end of a dispatcher's claim while an attempt is under way. */
  next_attempt_at: string | null;
  /** Grows by one with every replace (optimistic concurrency). */
  version: number;
}

/** A signed POST to a webhook receiver, built by the core. */
export interface WebhookRequest {
  /** POST unless said otherwise (chat APIs also read with GET and replace with PUT). */
  method?: 'GET' | 'POST' | 'PUT';
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
}

/** `body`: the receiver's answer (up to 1 MiB), which chat APIs use to say `ok` or why not. */
export type WebhookResponse = { status: number; body?: string } | { error: string };

/**
 * Sends webhook requests (adapters/outbound-http.ts): refuses loopback, private and metadata
 * addresses after resolving names, also on redirects, unless the instance allows them. Never
 * throws for the receiver's failures: they come back as a status or an error.
 */
export interface WebhookSender {
  post(req: WebhookRequest): Promise<WebhookResponse>;
}
