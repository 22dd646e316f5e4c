import { SendEmailCommand, type SESv2Client } from '@aws-sdk/client-sesv2';
import type { EmailMessage, EmailSender } from '../../ports.js';

/** Email notices through SES, from an identity verified in the account (SES_FROM_ADDRESS). */
export class SesEmailSender implements EmailSender {
  constructor(
    private readonly client: SESv2Client,
    private readonly from: string,
  ) {}

  async send(message: EmailMessage): Promise<void> {
    await this.client.send(
      new SendEmailCommand({
        FromEmailAddress: this.from,
        Destination: { ToAddresses: [message.to] },
        Content: { Simple: { Subject: { Data: message.subject, Charset: 'UTF-8' }, Body: { Text: { Data: message.text, Charset: 'UTF-8' } } } },
      }),
    );
  }
}
