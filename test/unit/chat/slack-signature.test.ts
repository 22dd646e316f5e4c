import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { assertFresh, assertSignedBy } from '../../../functions/core/chat/slack-signature.js';
import { submittedValues } from '../../../functions/core/chat/slack-blocks.js';

/** Slack's v0 request signing as its documentation states it, computed here independently. */
const SECRET = '8f742231b10e8888abcd99yyyzzz85a5';
const sign = (timestamp: string, body: string, secret = SECRET) => `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`;

describe('Slack request signatures', () => {
  const body = 'payload=%7B%22type%22%3A%22block_actions%22%7D';
  const now = 1_700_000_000_000;
  const ts = String(now / 1000);

  it('accepts the signing secret over timestamp and raw body, and nothing else', () => {
    expect(() => assertSignedBy({ signature: sign(ts, body), timestamp: ts, rawBody: body }, SECRET)).not.toThrow();
    for (const req of [
      { signature: sign(ts, body, 'another secret'), timestamp: ts, rawBody: body },
      { signature: sign(ts, body), timestamp: String(Number(ts) + 1), rawBody: body },
      { signature: sign(ts, body), timestamp: ts, rawBody: `${body}&x=1` },
      { signature: sign(ts, body).toUpperCase(), timestamp: ts, rawBody: body },
      { signature: 'v0=', timestamp: ts, rawBody: body },
    ]) {
      expect(() => assertSignedBy(req, SECRET)).toThrow(expect.objectContaining({ status: 401 }));
    }
  });

  it('refuses a timestamp more than five minutes away, either way, or none', () => {
    const at = (seconds: number) => ({ signature: 'v0=x', timestamp: String(now / 1000 + seconds), rawBody: body });
    expect(() => assertFresh(at(-300), now)).not.toThrow();
    expect(() => assertFresh(at(300), now)).not.toThrow();
    expect(() => assertFresh(at(-301), now)).toThrow(expect.objectContaining({ status: 401 }));
    expect(() => assertFresh(at(301), now)).toThrow(expect.objectContaining({ status: 401 }));
    expect(() => assertFresh({ signature: undefined, timestamp: ts, rawBody: body }, now)).toThrow(expect.objectContaining({ status: 401 }));
    expect(() => assertFresh({ signature: 'v0=x', timestamp: '1.7e9', rawBody: body }, now)).toThrow(expect.objectContaining({ status: 401 }));
  });
});

describe('form values from a submitted modal', () => {
  const schema = { properties: { amount: { type: 'number' }, urgent: { type: 'boolean' }, note: { type: 'string' } } };

  it('types them as the form says and leaves empty fields out', () => {
    const state = {
      values: {
        amount: { value: { type: 'number_input', value: '12.5' } },
        urgent: { value: { type: 'static_select', selected_option: { value: 'true' } } },
        note: { value: { type: 'plain_text_input', value: null } },
      },
    };
    expect(submittedValues(schema, state)).toEqual({ amount: 12.5, urgent: true });
  });

  it('says null for a state that is not what Slack sends', () => {
    expect(submittedValues(schema, null)).toBeNull();
    expect(submittedValues(schema, { values: { amount: 'x' } })).toBeNull();
    expect(submittedValues(schema, { values: { amount: { value: { value: 5 } } } })).toBeNull();
  });
});
