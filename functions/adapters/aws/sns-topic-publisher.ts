import { PublishCommand, type SNSClient } from '@aws-sdk/client-sns';
import type { TopicPublisher } from '../../ports.js';

/** SNS subjects: at most 100 characters, printable ASCII, no line breaks. */
const SUBJECT_MAX = 100;

/** ConsentGate notices through SNS: the stack's approvals topic (APPROVALS_TOPIC_ARN) unless the gate names one. */
export class SnsTopicPublisher implements TopicPublisher {
  constructor(
    private readonly client: SNSClient,
    private readonly approvalsTopicArn: string,
  ) {}

  async publish(notice: { topicArn: string | null; subject: string; text: string }): Promise<void> {
    const subject = notice.subject.replace(/[^\x20-\x7e]/g, '?').slice(0, SUBJECT_MAX);
    await this.client.send(new PublishCommand({ TopicArn: notice.topicArn ?? this.approvalsTopicArn, Subject: subject, Message: notice.text }));
  }
}
