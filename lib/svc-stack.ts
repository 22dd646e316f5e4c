import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { DEFAULT_CONFIG, validateConfig, type SvcConfig } from './config.js';
import { Alarms } from './constructs/alarms.js';
import { Api } from './constructs/api.js';
import { Data } from './constructs/data.js';
import { Events } from './constructs/events.js';
import { FlowRunner } from './constructs/flow-runner.js';
import { JobQueue } from './constructs/job-queue.js';
import { Maintenance } from './constructs/maintenance.js';
import { Sandboxes } from './constructs/sandbox.js';
import { Secrets } from './constructs/secrets.js';
import { Worker, WORKER_TIMEOUT } from './constructs/worker.js';

export interface SvcStackProps extends StackProps, Partial<SvcConfig> {}

/**
 * svc on AWS (docs/architecture.md "What runs where"): API Gateway -> api Lambda; jobs on SQS ->
 * worker Lambda -> sandbox Lambdas without permissions; flows on a Step Functions state machine;
 * state in DynamoDB; large payloads in S3.
 */
export class SvcStack extends Stack {
  readonly config: SvcConfig;
  readonly data: Data;
  readonly secrets: Secrets;
  readonly jobQueue: JobQueue;
  readonly sandboxes: Sandboxes;
  readonly api: Api;
  readonly worker: Worker;
  readonly flowRunner: FlowRunner;
  readonly maintenance: Maintenance;
  readonly events: Events;
  readonly alarms: Alarms;

  constructor(scope: Construct, id: string, props: SvcStackProps = {}) {
    super(scope, id, props);
    const config = validateConfig({
      stage: props.stage ?? DEFAULT_CONFIG.stage,
      syncMaxWaitSeconds: props.syncMaxWaitSeconds ?? DEFAULT_CONFIG.syncMaxWaitSeconds,
      logRetentionDays: props.logRetentionDays ?? DEFAULT_CONFIG.logRetentionDays,
      jobTimeoutSeconds: props.jobTimeoutSeconds ?? DEFAULT_CONFIG.jobTimeoutSeconds,
      maxOutputBytes: props.maxOutputBytes ?? DEFAULT_CONFIG.maxOutputBytes,
      notificationSender: props.notificationSender,
    });
    this.config = config;

    this.data = new Data(this, 'Data', config);
    this.secrets = new Secrets(this, 'Secrets', config);
    this.jobQueue = new JobQueue(this, 'JobQueue', { consumerTimeout: WORKER_TIMEOUT });
    this.sandboxes = new Sandboxes(this, 'Sandboxes', config);
    this.flowRunner = new FlowRunner(this, 'FlowRunner', { config, data: this.data, secrets: this.secrets, jobsQueue: this.jobQueue.queue, sandboxes: this.sandboxes });
    this.api = new Api(this, 'Api', { config, data: this.data, secrets: this.secrets, jobsQueue: this.jobQueue.queue, flowRunner: this.flowRunner });
    this.worker = new Worker(this, 'Worker', {
      config,
      data: this.data,
      secrets: this.secrets,
      jobsQueue: this.jobQueue.queue,
      sandboxes: this.sandboxes,
      flowRunner: this.flowRunner,
      apiBaseUrl: this.api.baseUrl,
    });
    this.maintenance = new Maintenance(this, 'Maintenance', { config, data: this.data, secrets: this.secrets, jobsQueue: this.jobQueue.queue, flowRunner: this.flowRunner });
    this.events = new Events(this, 'Events', { config, data: this.data, secrets: this.secrets, jobsQueue: this.jobQueue.queue });
    this.alarms = new Alarms(this, 'Alarms', { config, deadLetterQueue: this.jobQueue.deadLetterQueue });

    new CfnOutput(this, 'ApiUrl', { value: this.api.restApi.url, description: 'Base URL of the svc API (append api/version to try it)' });
    new CfnOutput(this, 'AdminTokenSecretName', {
      value: this.secrets.adminToken.secretName,
      description: 'The admin API token: aws secretsmanager get-secret-value --secret-id <this> --query SecretString --output text',
    });
    new CfnOutput(this, 'AdminTokenSecretArn', { value: this.secrets.adminToken.secretArn });
    new CfnOutput(this, 'AlarmTopicArn', { value: this.alarms.topic.topicArn, description: 'Subscribe to hear about jobs parked in the dead-letter queue' });
    new CfnOutput(this, 'ApprovalsTopicArn', { value: this.flowRunner.approvalsTopic.topicArn, description: 'Subscribe to hear about runs waiting at a ConsentGate with an sns notice' });
    new CfnOutput(this, 'TableName', { value: this.data.table.tableName });
    new CfnOutput(this, 'BucketName', { value: this.data.bucket.bucketName });
    new CfnOutput(this, 'FlowRunnerStateMachineArn', { value: this.flowRunner.stateMachine.stateMachineArn, description: 'Every flow run is an execution of this state machine, named <flow path>-<job id>' });
    new CfnOutput(this, 'JobsQueueUrl', { value: this.jobQueue.queue.queueUrl });
    new CfnOutput(this, 'DeadLetterQueueUrl', { value: this.jobQueue.deadLetterQueue.queueUrl });
  }
}
