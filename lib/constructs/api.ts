import { Duration, Fn, Stack, Validations } from 'aws-cdk-lib';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { removalPolicyFor, uploadPartBytes, type SvcConfig } from '../config.js';
import type { Data } from './data.js';
import { functionLogGroup, nodeFunction, serviceEnvironment, serviceRole } from './lambda-defaults.js';
import { NODE_RUNTIME_PIN_REASON } from './nag.js';
import type { FlowRunner } from './flow-runner.js';
import type { Sandboxes } from './sandbox.js';
import type { Secrets } from './secrets.js';

export interface ApiProps {
  readonly config: SvcConfig;
  readonly data: Data;
  readonly secrets: Secrets;
  readonly jobsQueue: sqs.IQueue;
  readonly flowRunner: FlowRunner;
  /** Sync webhooks' and SSE streams' jobs run from the api, through these. */
  readonly sandboxes: Sandboxes;
}

/**
 * The HTTP API: API Gateway REST API -> one Lambda running the same Hono app as the local server.
 * Every path goes to the app (`{proxy+}` and the root); routing, auth and errors are the app's.
 */
export class Api extends Construct {
  readonly handler: lambda.Function;
  readonly restApi: apigw.RestApi;
  /**
   * Where users reach the API, without a trailing slash: the custom domain when configured, else
   * the stage's execute-api URL. Every URL the service builds starts with it (API_BASE_URL).
   */
  readonly baseUrl: string;
  /** The custom domain, when configured: DNS points at its regional target. */
  readonly domainName?: apigw.DomainName;

  constructor(scope: Construct, id: string, props: ApiProps) {
    super(scope, id);
    const { config, data, secrets } = props;

    const accessLogs = new logs.LogGroup(this, 'AccessLogs', {
      retention: config.logRetentionDays,
      removalPolicy: removalPolicyFor(config.stage),
    });

    this.restApi = new apigw.RestApi(this, 'RestApi', {
      restApiName: `svc-${config.stage}`,
      description: `svc ${config.stage}: workflow automation API`,
      // Regional: a streamed response may idle 5 minutes there, 30 seconds on edge-optimized.
      endpointConfiguration: { types: [apigw.EndpointType.REGIONAL] },
      // Every body reaches the app base64-encoded, as the bytes the client sent: passed on as text,
      // bytes that are not UTF-8 would be replaced by U+FFFD before the app could refuse them.
      binaryMediaTypes: ['*/*'],
      // The account-wide role API Gateway needs to write execution logs (AWS::ApiGateway::Account).
      cloudWatchRole: true,
      deployOptions: {
        stageName: config.stage,
        accessLogDestination: new apigw.LogGroupLogDestination(accessLogs),
        accessLogFormat: apigw.AccessLogFormat.jsonWithStandardFields(),
        loggingLevel: apigw.MethodLoggingLevel.ERROR,
        // Full request/response logging would put bearer tokens and secret values in the logs.
        dataTraceEnabled: false,
        metricsEnabled: true,
        // A request's trace goes on into the api function and what it calls.
        tracingEnabled: true,
        // A ceiling per stage so one noisy client cannot run up the Lambda bill unnoticed.
        throttlingRateLimit: config.throttleRateLimit,
        throttlingBurstLimit: config.throttleBurstLimit,
      },
    });

    // The stage name is the configured one, not a reference to the stage resource: the api
    // function's environment names this URL, and the stage depends on that function.
    const stageUrl = Fn.join('', ['https://', this.restApi.restApiId, '.execute-api.', Stack.of(this).region, '.', Stack.of(this).urlSuffix, '/', config.stage]);
    if (config.domainName && config.certificateArn) {
      this.domainName = new apigw.DomainName(this, 'CustomDomain', {
        domainName: config.domainName,
        certificate: acm.Certificate.fromCertificateArn(this, 'CustomDomainCertificate', config.certificateArn),
        endpointType: apigw.EndpointType.REGIONAL,
        securityPolicy: apigw.SecurityPolicy.TLS_1_2,
      });
      this.domainName.addBasePathMapping(this.restApi, { basePath: config.basePath, stage: this.restApi.deploymentStage });
      this.baseUrl = `https://${config.domainName}${config.basePath ? `/${config.basePath}` : ''}`;
    } else {
      this.baseUrl = stageUrl;
    }

    const logGroup = functionLogGroup(this, 'HandlerLogs', config);
    const role = serviceRole(this, 'HandlerRole', logGroup, 'svc api: serves the HTTP API');
    this.handler = nodeFunction(this, 'Handler', {
      entry: 'functions/handlers/api.ts',
      description: 'svc api: the HTTP API (webhooks, jobs, scripts), response streaming',
      bundling: {
        // The console's chart library and editor bundle, served by the API (functions/http/console/static-assets.ts),
        // which looks for it beside its bundle: the bundle has no node_modules.
        commandHooks: {
          beforeBundling: () => [],
          beforeInstall: () => [],
          afterBundling: (inputDir, outputDir) => [
            `mkdir -p "${outputDir}/console-assets"`,
            `cp "${inputDir}/node_modules/uplot/dist/uPlot.iife.min.js" "${outputDir}/console-assets/uplot.iife.min.js"`,
            `cp "${inputDir}/node_modules/uplot/dist/uPlot.min.css" "${outputDir}/console-assets/uplot.min.css"`,
            // The script editor's browser bundle (CodeMirror), built as bin/build.js builds it for dist/.
            `node "${inputDir}/bin/build.js" --console-assets "${outputDir}/console-assets"`,
          ],
        },
      },
      role,
      logGroup,
      // The handler streams SSE and holds sync webhooks until their job ends (Lambda's 900 s by default).
      timeout: Duration.seconds(config.apiTimeoutSeconds),
      // Billed while it holds a request, which for a sync webhook is the whole run of its script.
      memorySize: config.apiMemoryMb,
      reservedConcurrentExecutions: config.apiReservedConcurrency,
      environment: {
        ...serviceEnvironment(data, secrets, props.jobsQueue),
        STATE_MACHINE_ARN: props.flowRunner.stateMachineArn,
        // Flows may ask for SNS notices only where there is a topic; the api checks at create.
        APPROVALS_TOPIC_ARN: props.flowRunner.approvalsTopic.topicArn,
        ADMIN_TOKEN_SECRET_ARN: secrets.adminToken.secretArn,
        SYNC_MAX_WAIT_SECONDS: String(config.syncMaxWaitSeconds),
        // An SSE stream ends with a `timeout` event (where to resume) before the function's timeout cuts it.
        SSE_MAX_SECONDS: String(sseMaxSeconds(config.apiTimeoutSeconds)),
        JOB_TIMEOUT_SECONDS: String(config.jobTimeoutSeconds),
        MAX_OUTPUT_BYTES: String(config.maxOutputBytes),
        // Uploads bypass the api's body limit: their parts go to S3 by presigned URL.
        MAX_UPLOAD_BYTES: String(config.maxUploadBytes),
        UPLOAD_PART_BYTES: String(uploadPartBytes(config.maxUploadBytes)),
        SANDBOX_NODE_FUNCTION: props.sandboxes.nodeSandbox.functionArn,
        SANDBOX_PYTHON_FUNCTION: props.sandboxes.pythonSandbox.functionArn,
        // Resume, cancel and approval-page URLs are absolute: without it they would lack host and stage.
        API_BASE_URL: this.baseUrl,
      },
    });
    Validations.of(this.handler).acknowledge({ id: 'AwsSolutions-L1', reason: NODE_RUNTIME_PIN_REASON });

    // The api creates jobs and updates them (cancel, resume), so it writes the table too: "only the
    // worker writes job results" holds in the code, not in IAM. Separating them in IAM would take
    // dynamodb:Attributes conditions on every job write, which the core's updates do not fit yet.
    data.grantTableReadWrite(role);
    data.grantObjectReadWrite(role);
    // No sqs:SendMessage nor states:StartExecution: a stored job reaches the queue or its flow's
    // execution through the table's stream (the job dispatcher, job-delivery.ts).
    // A sync webhook's or SSE stream's job runs from here (functions/adapters/aws/api-job-runner.ts):
    // exactly the two sandboxes, unqualified ARNs, as the worker. lambda:InvokeFunction also
    // authorizes InvokeWithResponseStream.
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'InvokeSandboxes',
        actions: ['lambda:InvokeFunction'],
        resources: [props.sandboxes.nodeSandbox.functionArn, props.sandboxes.pythonSandbox.functionArn],
      }),
    );
    // A resume or cancel wakes a flow's waiting state.
    role.addToPrincipalPolicy(new iam.PolicyStatement({ sid: 'WakeFlows', actions: ['states:SendTaskSuccess'], resources: [props.flowRunner.stateMachineArn] }));
    secrets.signingKey.grantRead(role);
    secrets.adminToken.grantRead(role);
    secrets.grantSecretVariables(role);

    // STREAM: the integration calls Lambda's response-streaming-invocations, so SSE events reach
    // the client as they happen and sync waits may run past API Gateway's 29 s buffered limit
    // (up to 15 minutes when streaming).
    const integration = new apigw.LambdaIntegration(this.handler, {
      proxy: true,
      responseTransferMode: apigw.ResponseTransferMode.STREAM,
      timeout: Duration.seconds(config.apiTimeoutSeconds),
      // Console test invocations would need a second permission per method; nobody uses them.
      allowTestInvoke: false,
    });
    this.restApi.root.addMethod('ANY', integration);
    this.restApi.root.addProxy({ defaultIntegration: integration, anyMethod: true });

    const appAuth =
      'The app authenticates every request itself (bearer API tokens, job tokens, signed single-use resume URLs, session cookies), ' +
      'as the spec requires for webhooks called by third parties; an API Gateway authorizer or API key would add a second, different credential.';
    Validations.of(this.restApi).acknowledge(
      { id: 'AwsSolutions-APIG4', reason: appAuth },
      { id: 'AwsSolutions-COG4', reason: `${appAuth} There are no Cognito users: svc keeps its own users and tokens.` },
      {
        id: 'AwsSolutions-APIG2',
        reason: 'A single proxy resource hands every request to the app, which validates each body with zod and answers 4xx with a JSON error; a model here would duplicate those schemas.',
      },
      {
        id: 'AwsSolutions-APIG3',
        reason: 'No WAF web ACL by default (it costs per ACL and rule); stage throttling bounds abuse, and an operator can associate a web ACL with the stage without changing the stack.',
      },
    );
    Validations.of(this.restApi).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
      reason: 'The account-level CloudWatch role of API Gateway, created the way CDK does it; the AWS managed policy is the documented one and is tracked by AWS as the service changes.',
    });
  }
}

/** Time an SSE stream keeps to write its last event and close before the api function's timeout. */
const SSE_END_MARGIN_SECONDS = 20;

/** How long the api lets an SSE stream run: its timeout less the margin (at least a second). */
export function sseMaxSeconds(apiTimeoutSeconds: number): number {
  return Math.max(1, apiTimeoutSeconds - SSE_END_MARGIN_SECONDS);
}
