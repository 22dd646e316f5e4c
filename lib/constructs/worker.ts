import { Duration, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { LAMBDA_MAX_SECONDS, WORKER_BATCH_SIZE, type SvcConfig } from '../config.js';
import type { Data } from './data.js';
import { functionLogGroup, nodeFunction, serviceEnvironment, serviceRole } from './lambda-defaults.js';
import { NODE_RUNTIME_PIN_REASON } from './nag.js';
import type { FlowRunner } from './flow-runner.js';
import type { Sandboxes } from './sandbox.js';
import type { Secrets } from './secrets.js';

/** The worker holds its messages while their jobs run, so it may run as long as Lambda allows. */
export const WORKER_TIMEOUT = Duration.seconds(LAMBDA_MAX_SECONDS);

export interface WorkerProps {
  readonly config: SvcConfig;
  readonly data: Data;
  readonly secrets: Secrets;
  readonly jobsQueue: sqs.IQueue;
  readonly sandboxes: Sandboxes;
  readonly flowRunner: FlowRunner;
  /** The API's base URL, handed to jobs as BASE_INTERNAL_URL. */
  readonly apiBaseUrl: string;
}

/**
 * Consumes the jobs queue: claims each job, has a sandbox function run its code, writes status,
 * logs and result back. It holds the service's credentials; the code it runs never does.
 */
export class Worker extends Construct {
  readonly handler: lambda.Function;

  constructor(scope: Construct, id: string, props: WorkerProps) {
    super(scope, id);
    const { config, data, secrets, sandboxes } = props;

    const logGroup = functionLogGroup(this, 'HandlerLogs', config);
    const role = serviceRole(this, 'HandlerRole', logGroup, 'svc worker: runs queued jobs through the sandboxes');
    this.handler = nodeFunction(this, 'Handler', {
      entry: 'functions/handlers/worker.ts',
      description: 'svc worker: runs jobs from the queue in the sandbox functions',
      role,
      logGroup,
      timeout: WORKER_TIMEOUT,
      // It waits on the sandbox while a job runs, billed all along: only what relaying needs.
      memorySize: config.workerMemoryMb,
      reservedConcurrentExecutions: config.workerReservedConcurrency,
      environment: {
        // The worker consumes the queue but has no permission to send to it.
        ...serviceEnvironment(data, secrets, props.jobsQueue),
        SANDBOX_NODE_FUNCTION: sandboxes.nodeSandbox.functionArn,
        SANDBOX_PYTHON_FUNCTION: sandboxes.pythonSandbox.functionArn,
        API_BASE_URL: props.apiBaseUrl,
        JOB_TIMEOUT_SECONDS: String(config.jobTimeoutSeconds),
        MAX_OUTPUT_BYTES: String(config.maxOutputBytes),
      },
    });
    Validations.of(this.handler).acknowledge({ id: 'AwsSolutions-L1', reason: NODE_RUNTIME_PIN_REASON });

    // Partial batch failures: one failing job is retried alone instead of its whole batch.
    // maxConcurrency caps a burst without a reservation: extra messages wait in the queue instead
    // of throttling every function of the account at once.
    this.handler.addEventSource(
      new SqsEventSource(props.jobsQueue, { batchSize: WORKER_BATCH_SIZE, reportBatchItemFailures: true, maxConcurrency: config.workerMaxConcurrency }),
    );

    data.grantTableReadWrite(role);
    data.grantObjectReadWrite(role);
    // The worker signs job tokens (OV_TOKEN); it never needs the admin token.
    secrets.signingKey.grantRead(role);
    secrets.grantSecretVariables(role);
    // Exactly the two sandboxes, unqualified ARNs only. lambda:InvokeFunction also authorizes
    // InvokeWithResponseStream, which the worker uses to read a job's output while it runs.
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'InvokeSandboxes',
        actions: ['lambda:InvokeFunction'],
        resources: [sandboxes.nodeSandbox.functionArn, sandboxes.pythonSandbox.functionArn],
      }),
    );
    // A flow's step job carries its execution's task token, completed once the job has finished;
    // a finished step also wakes its flow if it waits.
    role.addToPrincipalPolicy(new iam.PolicyStatement({ sid: 'CompleteFlowSteps', actions: ['states:SendTaskSuccess'], resources: [props.flowRunner.stateMachineArn] }));
  }
}
