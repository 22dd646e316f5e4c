import { Match, Template } from 'aws-cdk-lib/assertions';
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { awsConfigFromEnv } from '../../functions/adapters/aws/aws-config.js';
import { resumeUrls } from '../../functions/core/approvals/resume.js';
import type { SvcStack, SvcStackProps } from '../../lib/svc-stack.js';
import { evaluate } from './intrinsics.js';
import { buildSvcApp, logicalId } from './svc-app.js';

/**
 * What an operator deploying into a new account relies on: links that work from outside (host and
 * stage, or the custom domain), and the limits that keep a burst from throttling everything.
 */

type Resource = { Type: string; Properties: Record<string, any> };

const synth = (props?: SvcStackProps) => {
  const { stack } = buildSvcApp({ bundle: false, props });
  return { stack, template: Template.fromStack(stack) };
};

const envOf = (stack: SvcStack, template: Template, fn: Parameters<typeof logicalId>[0]): Record<string, unknown> =>
  (template.toJSON().Resources[logicalId(fn)] as Resource).Properties.Environment.Variables;

/** The resume URL the deployed api function would build, its environment evaluated as CloudFormation would. */
function deployedResumeUrl(stack: SvcStack, template: Template, deployed: { restApiId: string; region: string }): URL {
  const env = envOf(stack, template, stack.api.handler);
  const apiBaseUrl = evaluate(env.API_BASE_URL, { region: deployed.region, refs: { [logicalId(stack.api.restApi)]: deployed.restApiId } });
  const config = awsConfigFromEnv({ TABLE_NAME: 't', BUCKET_NAME: 'b', JOBS_QUEUE_URL: 'q', SECRETS_KMS_KEY_ID: 'k', SIGNING_KEY_HEX: randomBytes(32).toString('hex'), API_BASE_URL: apiBaseUrl });
  const urls = resumeUrls({ config: { ...config.core, signingKey: new Uint8Array(32) } }, { workspaceId: 'main', stepJobId: 'job-1', resumeId: 7, approver: null, flowLevel: false });
  return new URL(urls.resume);
}

describe('public base URL', () => {
  let stack: SvcStack;
  let template: Template;
  beforeAll(() => ({ stack, template } = synth({ stage: 'prod' })));

  it('is the stage URL the stack outputs, and the api function builds resume URLs on it: host and stage', () => {
    const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
    const deployed = { region: 'eu-west-1', refs: { [logicalId(stack.api.restApi)]: 'a1b2c3d4e5' } };
    const published = evaluate(outputs.PublicBaseUrl.Value, deployed);
    expect(published).toBe('https://a1b2c3d4e5.execute-api.eu-west-1.amazonaws.com/prod');
    // The ApiUrl output (RestApi.url) names the same stage, with its trailing slash.
    expect(JSON.stringify(outputs.ApiUrl.Value)).toContain(logicalId(stack.api.restApi));

    const resume = deployedResumeUrl(stack, template, { restApiId: 'a1b2c3d4e5', region: 'eu-west-1' });
    expect(resume.origin).toBe(new URL(published).origin);
    expect(resume.host).toBe('a1b2c3d4e5.execute-api.eu-west-1.amazonaws.com');
    expect(resume.pathname).toMatch(/^\/prod\/api\/w\/main\/jobs_u\/resume\/job-1\/7\/[0-9a-f]{64}$/);
  });

  it('reaches every function that builds a URL: api, worker (BASE_INTERNAL_URL), flow runner (consent URLs) and maintenance', () => {
    const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
    for (const fn of [stack.api.handler, stack.worker.handler, stack.flowRunner.handler, stack.maintenance.handler]) {
      expect(envOf(stack, template, fn).API_BASE_URL, fn.node.path).toEqual(outputs.PublicBaseUrl.Value);
    }
  });

  it('never reaches the sandboxes, whose environment holds nothing of the service', () => {
    for (const fn of [stack.sandboxes.nodeSandbox, stack.sandboxes.pythonSandbox]) {
      expect((template.toJSON().Resources[logicalId(fn)] as Resource).Properties.Environment?.Variables?.API_BASE_URL).toBeUndefined();
    }
  });

  it('is the custom domain, with its base path, when one is configured; the domain maps to the stage', () => {
    const custom = synth({ stage: 'prod', domainName: 'svc.example.com', certificateArn: 'arn:aws:acm:eu-west-1:111122223333:certificate/abc', basePath: 'flows' });
    const resume = deployedResumeUrl(custom.stack, custom.template, { restApiId: 'unused', region: 'eu-west-1' });
    expect(resume.host).toBe('svc.example.com');
    expect(resume.pathname).toMatch(/^\/flows\/api\/w\/main\/jobs_u\/resume\//);
    custom.template.hasResourceProperties('AWS::ApiGateway::DomainName', {
      DomainName: 'svc.example.com',
      RegionalCertificateArn: 'arn:aws:acm:eu-west-1:111122223333:certificate/abc',
      EndpointConfiguration: { Types: ['REGIONAL'] },
      SecurityPolicy: 'TLS_1_2',
    });
    custom.template.hasResourceProperties('AWS::ApiGateway::BasePathMapping', { BasePath: 'flows', RestApiId: { Ref: logicalId(custom.stack.api.restApi) }, Stage: Match.anyValue() });
    expect(Object.keys(custom.template.toJSON().Outputs)).toContain('CustomDomainTarget');
  });

  it('refuses half a custom domain and a base path that is not one segment', () => {
    expect(() => synth({ domainName: 'svc.example.com' })).toThrow(/domainName and certificateArn/);
    expect(() => synth({ domainName: 'not a name', certificateArn: 'arn:aws:acm:eu-west-1:1:certificate/x' })).toThrow(/domainName/);
    expect(() => synth({ domainName: 'svc.example.com', certificateArn: 'arn:aws:acm:eu-west-1:1:certificate/x', basePath: 'a/b' })).toThrow(/basePath/);
  });
});

describe('concurrency', () => {
  it('by default reserves nothing (a new account cannot) and lets the queue start at most 10 workers', () => {
    const { stack, template } = synth();
    for (const fn of [stack.api.handler, stack.worker.handler, stack.sandboxes.nodeSandbox, stack.sandboxes.pythonSandbox]) {
      expect((template.toJSON().Resources[logicalId(fn)] as Resource).Properties.ReservedConcurrentExecutions).toBeUndefined();
    }
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', { FunctionName: { Ref: logicalId(stack.worker.handler) }, ScalingConfig: { MaximumConcurrency: 10 } });
  });

  it('reserves what is configured for api, worker and both sandboxes, with the queue capped to match', () => {
    const { stack, template } = synth({ apiReservedConcurrency: 50, workerReservedConcurrency: 20, sandboxReservedConcurrency: 100, workerMaxConcurrency: 20 });
    const reserved = (fn: Parameters<typeof logicalId>[0]) => (template.toJSON().Resources[logicalId(fn)] as Resource).Properties.ReservedConcurrentExecutions;
    expect(reserved(stack.api.handler)).toBe(50);
    expect(reserved(stack.worker.handler)).toBe(20);
    expect(reserved(stack.sandboxes.nodeSandbox)).toBe(100);
    expect(reserved(stack.sandboxes.pythonSandbox)).toBe(100);
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', { ScalingConfig: { MaximumConcurrency: 20 } });
  });

  it('refuses reservations that would throttle the worker or its sandboxes', () => {
    expect(() => synth({ workerMaxConcurrency: 20, workerReservedConcurrency: 10 })).toThrow(/workerReservedConcurrency \(10\) must be at least workerMaxConcurrency \(20\)/);
    expect(() => synth({ workerMaxConcurrency: 10, sandboxReservedConcurrency: 49 })).toThrow(/sandboxReservedConcurrency \(49\) must be at least .* = 50/);
    expect(() => synth({ workerMaxConcurrency: 1 })).toThrow(/workerMaxConcurrency/);
    expect(() => synth({ apiReservedConcurrency: 0 })).toThrow(/apiReservedConcurrency/);
  });
});

describe('stage throttling and the api timeout', () => {
  it('throttle the stage at 100 rps, burst 200, by default and at the configured rates otherwise', () => {
    synth().template.hasResourceProperties('AWS::ApiGateway::Stage', { MethodSettings: [Match.objectLike({ ThrottlingRateLimit: 100, ThrottlingBurstLimit: 200 })] });
    synth({ throttleRateLimit: 25, throttleBurstLimit: 50 }).template.hasResourceProperties('AWS::ApiGateway::Stage', {
      MethodSettings: [Match.objectLike({ ThrottlingRateLimit: 25, ThrottlingBurstLimit: 50 })],
    });
  });

  it('bound the api function and its integration by apiTimeoutSeconds, never below the sync wait', () => {
    const { stack, template } = synth({ apiTimeoutSeconds: 120, syncMaxWaitSeconds: 100 });
    expect((template.toJSON().Resources[logicalId(stack.api.handler)] as Resource).Properties.Timeout).toBe(120);
    const methods = Object.values(template.findResources('AWS::ApiGateway::Method')) as Resource[];
    for (const method of methods) expect(method.Properties.Integration.TimeoutInMillis).toBe(120_000);
    expect(() => synth({ apiTimeoutSeconds: 30, syncMaxWaitSeconds: 60 })).toThrow(/apiTimeoutSeconds \(30\) must be at least syncMaxWaitSeconds \(60\)/);
    expect(() => synth({ apiTimeoutSeconds: 901 })).toThrow(/apiTimeoutSeconds/);
  });

  it('end SSE streams 20 s before the api function times out, with a final event saying where to resume', () => {
    const defaults = synth();
    expect(envOf(defaults.stack, defaults.template, defaults.stack.api.handler).SSE_MAX_SECONDS).toBe('880');
    const short = synth({ apiTimeoutSeconds: 120, syncMaxWaitSeconds: 100 });
    expect(envOf(short.stack, short.template, short.stack.api.handler).SSE_MAX_SECONDS).toBe('100');
  });

  it('refuse a sync wait past the streamed response idle limit, naming it; 290 s is the longest', () => {
    expect(() => synth({ syncMaxWaitSeconds: 291 })).toThrow(/syncMaxWaitSeconds must be at most 290, got 291: API Gateway closes a streamed response idle for 300 s/);
    expect(() => synth({ syncMaxWaitSeconds: 600, apiTimeoutSeconds: 900 })).toThrow(/5-minute idle limit/);
    const { stack, template } = synth({ syncMaxWaitSeconds: 290 });
    expect(envOf(stack, template, stack.api.handler).SYNC_MAX_WAIT_SECONDS).toBe('290');
  });
});

describe('memory of the waiting functions (billed once)', () => {
  const memoryOf = (template: Template, fn: Parameters<typeof logicalId>[0]) => (template.toJSON().Resources[logicalId(fn)] as Resource).Properties.MemorySize;

  it('sizes the api at 512 MB and the worker at 256 MB by default, the sandboxes keeping 1 GB', () => {
    const { stack, template } = synth();
    expect(memoryOf(template, stack.api.handler)).toBe(512);
    expect(memoryOf(template, stack.worker.handler)).toBe(256);
    expect(memoryOf(template, stack.sandboxes.nodeSandbox)).toBe(1024);
    expect(memoryOf(template, stack.sandboxes.pythonSandbox)).toBe(1024);
  });

  it('takes apiMemoryMb and workerMemoryMb within Lambda range', () => {
    const { stack, template } = synth({ apiMemoryMb: 1024, workerMemoryMb: 128 });
    expect(memoryOf(template, stack.api.handler)).toBe(1024);
    expect(memoryOf(template, stack.worker.handler)).toBe(128);
    expect(() => synth({ workerMemoryMb: 127 })).toThrow(/workerMemoryMb must be between 128 and 10240/);
    expect(() => synth({ apiMemoryMb: 10_241 })).toThrow(/apiMemoryMb/);
  });

  it('names both sandboxes to the api, which runs sync webhooks through them', () => {
    const { stack, template } = synth();
    const env = envOf(stack, template, stack.api.handler);
    expect(env.SANDBOX_NODE_FUNCTION).toEqual({ 'Fn::GetAtt': [logicalId(stack.sandboxes.nodeSandbox), 'Arn'] });
    expect(env.SANDBOX_PYTHON_FUNCTION).toEqual({ 'Fn::GetAtt': [logicalId(stack.sandboxes.pythonSandbox), 'Arn'] });
  });
});

describe('flow runner', () => {
  const props = (template: Template, fn: Parameters<typeof logicalId>[0]) => (template.toJSON().Resources[logicalId(fn)] as Resource).Properties;

  it('runs plain steps inside Advance: Lambda\'s 900 s, the worker\'s 256 MB, both sandboxes, the worker\'s job timeout', () => {
    const { stack, template } = synth();
    const fn = props(template, stack.flowRunner.handler);
    expect(fn).toMatchObject({ Timeout: 900, MemorySize: 256 });
    expect(fn.Environment.Variables).toMatchObject({ FLOW_INLINE_STEPS: 'true', JOB_TIMEOUT_SECONDS: '840' });
    // The state machine waits for Advance as long as the function may run.
    expect(JSON.stringify(props(template, stack.flowRunner.stateMachine).DefinitionString)).toContain('\\"TimeoutSeconds\\":900');
    template.hasResourceProperties('AWS::IAM::Policy', {
      Roles: [{ Ref: Match.stringLikeRegexp('FlowRunnerHandlerRole') }],
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Sid: 'InvokeSandboxes', Resource: [{ 'Fn::GetAtt': [logicalId(stack.sandboxes.nodeSandbox), 'Arn'] }, { 'Fn::GetAtt': [logicalId(stack.sandboxes.pythonSandbox), 'Arn'] }] })]) },
    });
  });

  it('sends every step to the worker when flowInlineSteps is false, at the configured memory', () => {
    const { stack, template } = synth({ flowInlineSteps: false, flowRunnerMemoryMb: 512 });
    const fn = props(template, stack.flowRunner.handler);
    expect(fn.MemorySize).toBe(512);
    expect(fn.Environment.Variables.FLOW_INLINE_STEPS).toBe('false');
  });
});
