import { Duration, RemovalPolicy, Stack, Validations, ArnFormat } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as kms from 'aws-cdk-lib/aws-kms';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { FLOW_RUNNER_TIMEOUT_SECONDS, flowRunnerDefinition } from '../../statemachines/flow-runner.js';
import { removalPolicyFor, type SvcConfig } from '../config.js';
import type { Data } from './data.js';
import { functionLogGroup, nodeFunction, serviceEnvironment, serviceRole } from './lambda-defaults.js';
import { acknowledgeWildcardResource, NODE_RUNTIME_PIN_REASON } from './nag.js';
import { grantSendNotices, noticeEnvironment } from './notices.js';
import type { Sandboxes } from './sandbox.js';
import type { Secrets } from './secrets.js';

export interface FlowRunnerProps {
  readonly config: SvcConfig;
  readonly data: Data;
  readonly secrets: Secrets;
  readonly jobsQueue: sqs.IQueue;
  readonly sandboxes: Sandboxes;
}

/** A step job may wait in the queue and run this long before its flow looks at it again (it then waits on). */
const QUEUE_SLACK_SECONDS = 900;

/**
 * Flows on Step Functions (docs/architecture.md "Flow runner"): the flow-runner state machine, one Standard
 * execution per flow job (Express workflows cannot wait for task tokens), and the function its
 * Advance and wait states call. The definition lives in statemachines/flow-runner.ts, the same
 * one the aws test tier executes.
 */
export class FlowRunner extends Construct {
  readonly handler: lambda.Function;
  readonly stateMachine: sfn.StateMachine;
  /** Known before the state machine exists: the functions that call it need no reference to it. */
  readonly stateMachineArn: string;
  /** Every execution of the state machine (what DescribeExecution is granted on). */
  readonly executionsArn: string;
  /** Where ConsentGates with `{channel: 'sns'}` notify approvers; subscribe people or systems to it. */
  readonly approvalsTopic: sns.Topic;

  constructor(scope: Construct, id: string, props: FlowRunnerProps) {
    super(scope, id);
    const { config, data, secrets, sandboxes } = props;
    const stack = Stack.of(this);
    // A fixed name, so the function's own grant can name the state machine that calls it.
    const stateMachineName = `svc-${config.stage}-flow-runner`;
    this.stateMachineArn = stack.formatArn({ service: 'states', resource: 'stateMachine', resourceName: stateMachineName, arnFormat: ArnFormat.COLON_RESOURCE_NAME });
    const executionsArn = (this.executionsArn = stack.formatArn({ service: 'states', resource: 'execution', resourceName: `${stateMachineName}:*`, arnFormat: ArnFormat.COLON_RESOURCE_NAME }));

    // Encrypted with the AWS managed SNS key, whose policy lets the account's principals publish
    // through SNS: the publisher needs no KMS grant of its own. Reachable over TLS only.
    this.approvalsTopic = new sns.Topic(this, 'ApprovalsTopic', {
      displayName: `svc ${config.stage} approvals`,
      masterKey: kms.Alias.fromAliasName(this, 'SnsManagedKey', 'alias/aws/sns'),
      enforceSSL: true,
    });

    const logGroup = functionLogGroup(this, 'HandlerLogs', config);
    const role = serviceRole(this, 'HandlerRole', logGroup, 'svc flow runner: advances flows for the flow-runner state machine');
    this.handler = nodeFunction(this, 'Handler', {
      entry: 'functions/handlers/flow-runner.ts',
      description: 'svc flow runner: one turn of a flow interpreter per call, for the flow-runner state machine',
      role,
      logGroup,
      // Lambda's maximum: an Advance runs consecutive plain steps itself, each only if its timeout
      // fits in the time left. It mostly waits on the sandbox meanwhile: the worker's memory.
      timeout: Duration.seconds(FLOW_RUNNER_TIMEOUT_SECONDS),
      memorySize: config.flowRunnerMemoryMb,
      environment: {
        // It sends nothing to the queue itself: no grant on it.
        ...serviceEnvironment(data, secrets, props.jobsQueue),
        FLOW_INLINE_STEPS: String(config.flowInlineSteps),
        // A flow whose execution nears its history or age limit continues in a new one.
        STATE_MACHINE_ARN: this.stateMachineArn,
        SANDBOX_NODE_FUNCTION: sandboxes.nodeSandbox.functionArn,
        SANDBOX_PYTHON_FUNCTION: sandboxes.pythonSandbox.functionArn,
        JOB_TIMEOUT_SECONDS: String(config.jobTimeoutSeconds),
        MAX_OUTPUT_BYTES: String(config.maxOutputBytes),
        // A ConsentGate's email notices go out from the turn that reaches it.
        ...noticeEnvironment(config),
        APPROVALS_TOPIC_ARN: this.approvalsTopic.topicArn,
      },
    });
    Validations.of(this.handler).acknowledge({ id: 'AwsSolutions-L1', reason: NODE_RUNTIME_PIN_REASON });
    data.grantTableReadWrite(role);
    data.grantObjectReadWrite(role);
    secrets.signingKey.grantRead(role);
    // A gate's chat notice reads its Slack connection, whose bot token is a secret variable.
    secrets.grantSecretVariables(role);
    grantSendNotices(this, role, config);
    // The stack's approvals topic only: a gate naming another topic needs that topic's own policy.
    role.addToPrincipalPolicy(new iam.PolicyStatement({ sid: 'PublishApprovals', actions: ['sns:Publish'], resources: [this.approvalsTopic.topicArn] }));
    // Flow expressions are user code: they run in the Node sandbox; plain steps run inline go to
    // either sandbox, exactly as the worker's jobs do.
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({ sid: 'InvokeSandboxes', actions: ['lambda:InvokeFunction'], resources: [sandboxes.nodeSandbox.functionArn, sandboxes.pythonSandbox.functionArn] }),
    );
    // A wait that finds the flow already woken lets its execution go on at once; a flow whose
    // execution nears 25,000 history events or a year goes on in a new one (continue-as-new).
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({ sid: 'CompleteWaitsAndContinueFlows', actions: ['states:SendTaskSuccess', 'states:StartExecution'], resources: [this.stateMachineArn] }),
    );

    const definition = flowRunnerDefinition({
      flowRunnerFunctionArn: this.handler.functionArn,
      jobsQueueUrl: props.jobsQueue.queueUrl,
      stepTimeoutSeconds: config.jobTimeoutSeconds + QUEUE_SLACK_SECONDS,
    });
    const executionLogs = new logs.LogGroup(this, 'ExecutionLogs', {
      // Step Functions wants its vended log groups under /aws/vendedlogs/ to keep the resource policy small.
      logGroupName: `/aws/vendedlogs/states/${stateMachineName}`,
      retention: config.logRetentionDays,
      removalPolicy: removalPolicyFor(config.stage),
    });
    this.stateMachine = new sfn.StateMachine(this, 'StateMachine', {
      stateMachineName,
      stateMachineType: sfn.StateMachineType.STANDARD,
      definitionBody: sfn.DefinitionBody.fromString(stack.toJsonString(definition)),
      comment: 'svc flow runner: one execution per flow job',
      // Every state transition, without the data: inputs hold flow ids only, but results may not.
      logs: { destination: executionLogs, level: sfn.LogLevel.ALL, includeExecutionData: false },
      tracingEnabled: true,
      removalPolicy: config.stage === 'prod' ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });

    // What the definition's integrations need (fromString makes CDK grant nothing by itself).
    const smRole = this.stateMachine.role;
    this.handler.grantInvoke(smRole);
    props.jobsQueue.grantSendMessages(smRole);
    // Sub-flows, branches and loop iterations are child executions (startExecution.sync:2).
    smRole.addToPrincipalPolicy(new iam.PolicyStatement({ sid: 'StartChildExecutions', actions: ['states:StartExecution'], resources: [this.stateMachineArn] }));
    smRole.addToPrincipalPolicy(new iam.PolicyStatement({ sid: 'FollowChildExecutions', actions: ['states:DescribeExecution', 'states:StopExecution'], resources: [executionsArn] }));
    const syncRuleArn = stack.formatArn({ service: 'events', resource: 'rule', resourceName: 'StepFunctionsGetEventsForStepFunctionsExecutionRule' });
    smRole.addToPrincipalPolicy(new iam.PolicyStatement({ sid: 'SyncChildExecutions', actions: ['events:PutTargets', 'events:PutRule', 'events:DescribeRule'], resources: [syncRuleArn] }));

    Validations.of(smRole).acknowledge(
      {
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason: 'Added by CDK for execution logging and tracing: the CloudWatch Logs delivery actions (CreateLogDelivery, ...) and X-Ray PutTraceSegments support no resource-level permissions.',
      },
      {
        id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:${stateMachineName}:*]`,
        reason: 'A .sync child execution is followed and, when its parent stops, stopped: its name (flow path and job id) is only known at run time, so the grant covers the executions of this one state machine.',
      },
    );
    acknowledgeWildcardResource(smRole, this.handler, ':*', "lambda.grantInvoke covers the function's versions and aliases (`:*`); the state machine calls the unqualified function only.");
  }
}
