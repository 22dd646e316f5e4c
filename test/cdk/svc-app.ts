import { readFileSync } from 'node:fs';
import { App, Stack, type CfnResource } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { SvcStack, type SvcStackProps } from '../../lib/svc-stack.js';

/** The context `cdk synth` runs with (feature flags and defaults), so tests build the same stack. */
export function cdkJsonContext(): Record<string, unknown> {
  return JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')).context;
}

export interface BuildOptions {
  /** Run esbuild for the Node functions (a few seconds); without it assets point at the sources. */
  bundle: boolean;
  props?: SvcStackProps;
}

export function buildSvcApp({ bundle, props }: BuildOptions): { app: App; stack: SvcStack } {
  const context = { ...cdkJsonContext(), ...(bundle ? {} : { 'aws:cdk:bundling-stacks': [] }) };
  const app = new App({ context });
  const stack = new SvcStack(app, 'svc-test', props);
  return { app, stack };
}

/** The logical id CloudFormation knows a construct's resource by. */
export function logicalId(construct: IConstruct): string {
  const cfn = (construct.node.defaultChild ?? construct) as CfnResource;
  return Stack.of(cfn).resolve(cfn.logicalId) as string;
}

/** `{ 'Fn::GetAtt': [id, 'Arn'] }` of a construct, as the template references it. */
export const arnOf = (construct: IConstruct) => ({ 'Fn::GetAtt': [logicalId(construct), 'Arn'] });
