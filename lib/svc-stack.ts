import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { DEFAULT_CONFIG, validateConfig, type SvcConfig } from './config.js';
import { Alarms } from './constructs/alarms.js';
import { Api } from './constructs/api.js';
import { Dashboard, metricsNamespace } from './constructs/dashboard.js';
import { Data } from './constructs/data.js';
import { DependencyBuilder } from './constructs/dependency-builder.js';
import { Events } from './constructs/events.js';
import { FlowRunner } from './constructs/flow-runner.js';
import { JobDelivery } from './constructs/job-delivery.js';
import { JobQueue } from './constructs/job-queue.js';
import { Maintenance } from './constructs/maintenance.js';
import { Sandboxes } from './constructs/sandbox.js';
import { Schedules } from './constructs/schedules.js';
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
  readonly dependencyBuilder: DependencyBuilder;
  readonly flowRunner: FlowRunner;
  readonly maintenance: Maintenance;
  readonly schedules: Schedules;
  readonly events: Events;
  readonly jobDelivery: JobDelivery;
  readonly alarms: Alarms;
  readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: SvcStackProps = {}) {
    super(scope, id, props);
    const config = validateConfig(configFromProps(props));
    this.config = config;

    this.data = new Data(this, 'Data', config);
    this.secrets = new Secrets(this, 'Secrets', config);
    this.jobQueue = new JobQueue(this, 'JobQueue', { consumerTimeout: WORKER_TIMEOUT });
    this.sandboxes = new Sandboxes(this, 'Sandboxes', config);
    this.flowRunner = new FlowRunner(this, 'FlowRunner', { config, data: this.data, secrets: this.secrets, jobsQueue: this.jobQueue.queue, sandboxes: this.sandboxes });
    this.api = new Api(this, 'Api', { config, data: this.data, secrets: this.secrets, jobsQueue: this.jobQueue.queue, flowRunner: this.flowRunner, sandboxes: this.sandboxes });
    // Scripts' packages: resolved for the api at create, built into the bucket off the run path.
    this.dependencyBuilder = new DependencyBuilder(this, 'DependencyBuilder', { config, data: this.data });
    this.dependencyBuilder.grantInvoke(this.api.handler);
    for (const [name, value] of Object.entries(this.dependencyBuilder.environment(config))) this.api.handler.addEnvironment(name, value);
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
    // The api's URL is known only once the api exists, after the functions it names: the flow
    // runner (ConsentGate notices carry consent URLs) and maintenance get it here.
    for (const fn of [this.flowRunner.handler, this.maintenance.handler]) fn.addEnvironment('API_BASE_URL', this.api.baseUrl);
    this.schedules = new Schedules(this, 'Schedules', { config, data: this.data, secrets: this.secrets, jobsQueue: this.jobQueue.queue });
    // Saving a schedule puts its Scheduler schedule; only the api saves schedules.
    this.schedules.grantManage(this.api.handler);
    this.events = new Events(this, 'Events', { config, data: this.data, secrets: this.secrets, jobsQueue: this.jobQueue.queue });
    this.jobDelivery = new JobDelivery(this, 'JobDelivery', { config, data: this.data, secrets: this.secrets, jobQueue: this.jobQueue, flowRunner: this.flowRunner });
    this.alarms = new Alarms(this, 'Alarms', {
      config,
      deadLetterQueue: this.jobQueue.deadLetterQueue,
      dispatchFailures: this.jobDelivery.dispatchFailures,
      deadLetterConsumer: this.jobDelivery.deadLetters,
      restApi: this.api.restApi,
      worker: this.worker.handler,
      flowRunner: this.flowRunner.handler,
      stateMachine: this.flowRunner.stateMachine,
      sandboxes: [this.sandboxes.nodeSandbox, this.sandboxes.pythonSandbox],
    });
    const serviceFunctions = [
      this.api.handler,
      this.worker.handler,
      this.flowRunner.handler,
      this.maintenance.handler,
      this.events.handler,
      this.jobDelivery.dispatcher,
      this.jobDelivery.deadLetters,
      this.jobDelivery.reaper,
    ];
    // Powertools (functions/adapters/aws/powertools.ts) publishes each stage's metrics apart; the
    // dispatcher emits none (it only forwards jobs).
    for (const fn of serviceFunctions.filter((f) => f !== this.jobDelivery.dispatcher)) fn.addEnvironment('POWERTOOLS_METRICS_NAMESPACE', metricsNamespace(config));
    this.dashboard = new Dashboard(this, 'Dashboard', {
      config,
      restApi: this.api.restApi,
      jobsQueue: this.jobQueue.queue,
      deadLetterQueue: this.jobQueue.deadLetterQueue,
      stateMachine: this.flowRunner.stateMachine,
      worker: this.worker.handler,
      flowRunner: this.flowRunner.handler,
      sandboxes: [this.sandboxes.nodeSandbox, this.sandboxes.pythonSandbox],
      serviceFunctions,
    });

    new CfnOutput(this, 'ApiUrl', { value: this.api.restApi.url, description: 'Base URL of the svc API (append api/version to try it)' });
    new CfnOutput(this, 'PublicBaseUrl', { value: this.api.baseUrl, description: 'The URL every link the service builds starts with (resume, cancel, approval pages, BASE_INTERNAL_URL)' });
    if (this.api.domainName) {
      new CfnOutput(this, 'CustomDomainTarget', { value: this.api.domainName.domainNameAliasDomainName, description: `Point a CNAME (or alias) record for ${config.domainName} here` });
    }
    new CfnOutput(this, 'AdminTokenSecretName', {
      value: this.secrets.adminToken.secretName,
      description: 'The admin API token: aws secretsmanager get-secret-value --secret-id <this> --query SecretString --output text',
    });
    new CfnOutput(this, 'AdminTokenSecretArn', { value: this.secrets.adminToken.secretArn });
    new CfnOutput(this, 'AlarmTopicArn', { value: this.alarms.topic.topicArn, description: 'Subscribe to hear the alarms: dead letters, undelivered jobs, API 5xx, worker and flow-runner errors, sandbox throttles, flow executions timed out, stopped or stranded, reaped jobs' });
    new CfnOutput(this, 'DashboardName', { value: this.dashboard.dashboard.dashboardName, description: 'The CloudWatch dashboard of this stage' });
    new CfnOutput(this, 'ApprovalsTopicArn', { value: this.flowRunner.approvalsTopic.topicArn, description: 'Subscribe to hear about runs waiting at a ConsentGate with an sns notice' });
    new CfnOutput(this, 'TableName', { value: this.data.table.tableName });
    new CfnOutput(this, 'BucketName', { value: this.data.bucket.bucketName });
    new CfnOutput(this, 'FlowRunnerStateMachineArn', { value: this.flowRunner.stateMachine.stateMachineArn, description: 'Every flow run is an execution of this state machine, named <flow path>-<job id>' });
    new CfnOutput(this, 'JobsQueueUrl', { value: this.jobQueue.queue.queueUrl });
    new CfnOutput(this, 'DeadLetterQueueUrl', { value: this.jobQueue.deadLetterQueue.queueUrl });
  }
}

/** The stack's own settings out of its props: given ones win, the rest are the defaults. */
function configFromProps(props: SvcStackProps): SvcConfig {
  const given = Object.fromEntries(Object.entries(props).filter(([key, value]) => value !== undefined && key in CONFIG_KEYS));
  return { ...DEFAULT_CONFIG, ...given } as SvcConfig;
}

/** Every SvcConfig key, the optional ones too: the compiler checks the list is complete. */
const CONFIG_KEYS: Record<keyof SvcConfig, true> = {
  stage: true,
  syncMaxWaitSeconds: true,
  logRetentionDays: true,
  jobTimeoutSeconds: true,
  maxOutputBytes: true,
  notificationSender: true,
  domainName: true,
  certificateArn: true,
  basePath: true,
  apiReservedConcurrency: true,
  workerReservedConcurrency: true,
  sandboxReservedConcurrency: true,
  workerMaxConcurrency: true,
  throttleRateLimit: true,
  throttleBurstLimit: true,
  apiTimeoutSeconds: true,
  apiMemoryMb: true,
  workerMemoryMb: true,
  flowInlineSteps: true,
  flowRunnerMemoryMb: true,
  queuedDeadlineSeconds: true,
  maxUploadBytes: true,
  uploadAllowedOrigins: true,
  npmRegistry: true,
  pipIndexUrl: true,
  npmTokenSecretArn: true,
};
