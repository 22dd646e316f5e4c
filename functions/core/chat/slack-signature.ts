import { createHmac } from 'node:crypto';
import { sameSignature } from '../common/crypto.js';
import { ApiError } from '../common/errors.js';

/**
 * Slack's request signing, version 0: `X-Slack-Signature: v0=<hex HMAC-SHA256 of "v0:<timestamp>:<raw
 * body>" under the app's signing secret>`, with `X-Slack-Request-Timestamp` in seconds. A request
 * more than five minutes from our clock is refused, so a captured request cannot be replayed later.
 */

export const REPLAY_WINDOW_SECONDS = 5 * 60;

/** The 401 of a request Slack's signature does not prove. */
export const signatureRefused = (message: string) => new ApiError(401, 'invalid_signature', message);

export interface SignedRequest {
  signature: string | undefined;
  timestamp: string | undefined;
  rawBody: string;
}

/** Throws 401 unless the headers are present, fresh, and not obviously malformed. */
export function assertFresh(req: SignedRequest, nowMs: number): void {
  if (!req.signature || !req.timestamp) throw signatureRefused('a Slack request needs X-Slack-Signature and X-Slack-Request-Timestamp');
  if (!/^\d{1,12}$/.test(req.timestamp)) throw signatureRefused('X-Slack-Request-Timestamp is not a Unix time in seconds');
  if (Math.abs(nowMs / 1000 - Number(req.timestamp)) > REPLAY_WINDOW_SECONDS) throw signatureRefused('X-Slack-Request-Timestamp is more than five minutes away: refused as a possible replay');
}

export function slackSignature(signingSecret: string, timestamp: string, rawBody: string): string {
  return `v0=${createHmac('sha256', signingSecret).update(`v0:${timestamp}:${rawBody}`).digest('hex')}`;
}

/** Whether the signature is the signing secret's over this timestamp and body. */
export function isSignedBy(req: SignedRequest, signingSecret: string): boolean {
  return sameSignature(req.signature ?? '', slackSignature(signingSecret, req.timestamp ?? '', req.rawBody));
}

/** Throws 401 when the signature is not the signing secret's over this timestamp and body. */
export function assertSignedBy(req: SignedRequest, signingSecret: string): void {
  if (!isSignedBy(req, signingSecret)) throw signatureRefused('X-Slack-Signature does not match the request');
}
