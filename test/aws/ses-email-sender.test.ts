import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateEmailIdentityCommand, SESv2Client } from '@aws-sdk/client-sesv2';
import { SesEmailSender } from '../../functions/adapters/aws/ses-email-sender.js';
import { clientConfig } from './emulator-endpoints.js';
import { startKms, type KmsEndpoint } from './kms-local.js';

/**
 * The AWS shell's email notices through SES v2, on moto's server (the one the KMS tests start):
 * SES sends only from an identity verified in the account, and refuses anything else.
 */

let moto: KmsEndpoint;
let client: SESv2Client;

beforeAll(async () => {
  moto = await startKms();
  client = new SESv2Client(clientConfig(moto.endpoint));
  await client.send(new CreateEmailIdentityCommand({ EmailIdentity: 'svc@example.com' }));
}, 60_000);
afterAll(async () => {
  client?.destroy();
  await moto?.stop();
});

describe('SesEmailSender', () => {
  it('sends a notice from the verified identity', async () => {
    await expect(new SesEmailSender(client, 'svc@example.com').send({ to: 'alice@example.com', subject: 'Your svc token "ci" expires on 2030-01-01', text: 'Create a new one.' })).resolves.toBeUndefined();
  });

  it('is refused from an address the account has not verified', async () => {
    await expect(new SesEmailSender(client, 'someone-else@example.org').send({ to: 'alice@example.com', subject: 's', text: 't' })).rejects.toThrow(/not verified|MessageRejected/i);
  });
});
