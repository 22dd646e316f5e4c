import { createTransport, type Transporter } from 'nodemailer';
import type { EmailMessage, EmailSender } from '../../ports.js';

/** Email notices through the SMTP server SVC_SMTP_URL names. */
export class SmtpEmailSender implements EmailSender {
  private readonly transport: Transporter;

  constructor(
    url: string,
    private readonly from: string,
  ) {
    this.transport = createTransport(url);
  }

  async send(message: EmailMessage): Promise<void> {
    await this.transport.sendMail({ from: this.from, to: message.to, subject: message.subject, text: message.text });
  }

  close(): void {
    this.transport.close();
  }
}
