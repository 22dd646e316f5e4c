import { Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import type { SvcConfig } from '../config.js';

/**
 * Email notices through SES (token expiry, ConsentGate approvers): the sender setting for the
 * functions that send them, and a grant to send from that identity only.
 */

export function noticeEnvironment(config: SvcConfig): Record<string, string> {
  return config.notificationSender ? { SES_FROM_ADDRESS: config.notificationSender } : {};
}

export function grantSendNotices(scope: Construct, role: iam.Role, config: SvcConfig): void {
  if (!config.notificationSender) return;
  const stack = Stack.of(scope);
  const domain = config.notificationSender.split('@')[1];
  // SES authorizes against the identity that was verified: the address itself or its domain.
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      sid: 'SendNotices',
      actions: ['ses:SendEmail'],
      resources: [config.notificationSender, domain].map((identity) => stack.formatArn({ service: 'ses', resource: 'identity', resourceName: identity })),
    }),
  );
}
