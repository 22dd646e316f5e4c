import { describe, expect, it } from 'vitest';
import { PublishCommand, type SNSClient } from '@aws-sdk/client-sns';
import { SnsTopicPublisher } from '../../functions/adapters/aws/sns-topic-publisher.js';

/** The SNS adapter as SNS sees it: the topic, a subject SNS accepts, the message as given. */
describe('SnsTopicPublisher', () => {
  it('publishes to the approvals topic unless one is named, with a subject SNS accepts', async () => {
    const sent: PublishCommand[] = [];
    const client = { send: async (command: PublishCommand) => void sent.push(command) } as unknown as SNSClient;
    const publisher = new SnsTopicPublisher(client, 'arn:aws:sns:eu-west-1:1:approvals');
    await publisher.publish({ topicArn: null, subject: `Approval needed: ${'f/é/'.repeat(40)}\n`, text: '{"a":1}' });
    await publisher.publish({ topicArn: 'arn:aws:sns:eu-west-1:1:other', subject: 'short', text: 'x' });
    expect(sent.every((c) => c instanceof PublishCommand)).toBe(true);
    expect(sent[0].input).toMatchObject({ TopicArn: 'arn:aws:sns:eu-west-1:1:approvals', Message: '{"a":1}' });
    expect(sent[0].input.Subject).toMatch(/^[\x20-\x7e]{1,100}$/);
    expect(sent[1].input).toMatchObject({ TopicArn: 'arn:aws:sns:eu-west-1:1:other', Subject: 'short' });
  });
});
