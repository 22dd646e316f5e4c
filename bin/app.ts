#!/usr/bin/env node
/**
 * The CDK app: `npx cdk synth` / `npx cdk deploy` (cdk.json runs this through tsx).
 * Settings come from the CDK context: `-c stage=prod -c syncMaxWaitSeconds=120` (see lib/config.ts).
 */
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { configFromContext } from '../lib/config.js';
import { SvcStack } from '../lib/svc-stack.js';

const app = new App();
const config = configFromContext(app.node);

new SvcStack(app, `svc-${config.stage}`, {
  ...config,
  description: `svc (${config.stage}): workflow automation service on API Gateway, Lambda, SQS, Step Functions, DynamoDB and S3`,
  // Environment-agnostic unless the CLI knows an account: synth works without credentials.
  env: process.env.CDK_DEFAULT_ACCOUNT ? { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION } : undefined,
});

// Every synth checks the AWS Solutions rules; an unacknowledged finding fails it.
Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
