import { Stack, Validations, type CfnResource } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/**
 * Acknowledges cdk-nag's AwsSolutions-IAM5 for one wildcard resource, `<resource ARN><suffix>`, on
 * the policies of `grantee`: cdk-nag 3 names each finding, so an acknowledgment covers exactly that
 * ARN pattern and a new wildcard elsewhere still fails the checks.
 */
export function acknowledgeWildcardResource(grantee: IConstruct, resource: IConstruct, suffix: string, reason: string): void {
  const cfn = (resource.node.defaultChild ?? resource) as CfnResource;
  const logicalId = Stack.of(cfn).resolve(cfn.logicalId) as string;
  Validations.of(grantee).acknowledge({ id: `AwsSolutions-IAM5[Resource::<${logicalId}.Arn>${suffix}]`, reason });
}

export const NODE_RUNTIME_PIN_REASON =
  'nodejs22.x is pinned by the design (docs/architecture.md "Pins that matter"): the SDK pins and the local shell target Node 22; all functions move together.';
