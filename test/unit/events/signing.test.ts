import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { newWebhookSecret, signedHeaders } from '../../../functions/core/events/signing.js';

describe('Standard Webhooks signing', () => {
  const body = JSON.stringify({ specversion: '1.0', type: 'CreateScript', data: { path: 'u/a/b' } });

  it('signs so that the standardwebhooks library verifies the request', () => {
    const secret = newWebhookSecret();
    const headers = signedHeaders(secret, 'evt_1', new Date(), body);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  it('is refused by the library when the body, id or secret differ', () => {
    const secret = newWebhookSecret();
    const headers = signedHeaders(secret, 'evt_1', new Date(), body);
    expect(() => new Webhook(secret).verify(body.replace('u/a/b', 'u/a/c'), headers)).toThrow();
    expect(() => new Webhook(secret).verify(body, { ...headers, 'webhook-id': 'evt_2' })).toThrow();
    expect(() => new Webhook(newWebhookSecret()).verify(body, headers)).toThrow();
  });

  it('sends no signature without a secret, and the id and timestamp either way', () => {
    const at = new Date('2026-01-02T03:04:05Z');
    expect(signedHeaders(null, 'evt_1', at, body)).toEqual({ 'content-type': 'application/cloudevents+json', 'webhook-id': 'evt_1', 'webhook-timestamp': String(at.getTime() / 1000) });
  });
});
