import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { buildSvcApp, logicalId } from './svc-app.js';

/**
 * Scripts' packages on AWS (docs/dependencies-aws.md): the builder function may write trees under
 * the bucket's deps/ prefix and nothing else of the service's; the api knows it and may invoke it,
 * the sandboxes may not; the worker reads the trees it hands the sandboxes presigned URLs of.
 */
type Resource = { Type: string; Properties: Record<string, any> };
type Statement = { Action: string | string[]; Resource: unknown; Effect: string };

const { stack } = buildSvcApp({ bundle: false, props: { npmRegistry: 'https://npm.example.com/', pipIndexUrl: 'https://pypi.example.com/simple/' } });
const template = Template.fromStack(stack);
const resources = template.toJSON().Resources as Record<string, Resource>;
const propsOf = (construct: Parameters<typeof logicalId>[0]) => resources[logicalId(construct)].Properties;
/** Every statement of the inline policies attached to a role. */
const statementsOf = (roleId: string): Statement[] =>
  Object.values(resources)
    .filter((r) => r.Type === 'AWS::IAM::Policy' && JSON.stringify(r.Properties.Roles).includes(roleId))
    .flatMap((r) => r.Properties.PolicyDocument.Statement as Statement[]);
const actions = (s: Statement) => (Array.isArray(s.Action) ? s.Action : [s.Action]);

describe('the dependency builder', () => {
  const builder = stack.dependencyBuilder;

  it('is a container image function with npm and pip, given the registries and the bucket', () => {
    const props = propsOf(builder.handler);
    expect(props.PackageType).toBe('Image');
    expect(props.Timeout).toBe(900);
    expect(props.Environment.Variables).toMatchObject({ NPM_CONFIG_REGISTRY: 'https://npm.example.com/', PIP_INDEX_URL: 'https://pypi.example.com/simple/' });
    expect(JSON.stringify(props.Environment.Variables.BUCKET_NAME)).toContain(logicalId(stack.data.bucket));
  });

  it('writes only trees under deps/ of the bucket, and reads no table or secret', () => {
    const statements = statementsOf(logicalId(builder.role));
    const s3 = statements.filter((s) => actions(s).some((a) => a.startsWith('s3:')));
    expect(s3.length).toBeGreaterThan(0);
    for (const s of s3) {
      if (actions(s).includes('s3:ListBucket')) expect(s).toMatchObject({ Condition: { StringLike: { 's3:prefix': ['deps/*'] } } });
      else expect(JSON.stringify(s.Resource)).toContain('/deps/*');
    }
    const all = statements.flatMap(actions);
    expect(all.filter((a) => /^(dynamodb|secretsmanager|kms|lambda|sqs|states):/.test(a))).toEqual([]);
  });

  it('is named to the api, which alone may invoke it; the sandboxes may not', () => {
    const apiEnv = propsOf(stack.api.handler).Environment.Variables;
    expect(JSON.stringify(apiEnv.DEPS_BUILDER_FUNCTION)).toContain(logicalId(builder.handler));
    expect(apiEnv.NPM_CONFIG_REGISTRY).toBe('https://npm.example.com/');
    const invokers = Object.values(resources)
      .filter((r) => r.Type === 'AWS::IAM::Policy')
      .filter((r) => (r.Properties.PolicyDocument.Statement as Statement[]).some((s) => actions(s).includes('lambda:InvokeFunction') && JSON.stringify(s.Resource).includes(logicalId(builder.handler))))
      .flatMap((r) => r.Properties.Roles as unknown[]);
    expect(JSON.stringify(invokers)).toContain(logicalId(stack.api.handler.role!));
    expect(invokers).toHaveLength(1);
  });
});

describe("a private npm registry's token on AWS", () => {
  const arn = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:svc/npm-token-AbC123';
  const app = buildSvcApp({ bundle: false, props: { npmRegistry: 'https://npm.example.com/', npmTokenSecretArn: arn } });
  const json = Template.fromStack(app.stack).toJSON() as { Resources: Record<string, Resource> };
  const policies = Object.values(json.Resources).filter((r) => r.Type === 'AWS::IAM::Policy');
  const readers = policies
    .filter((r) => (r.Properties.PolicyDocument.Statement as Statement[]).some((s) => actions(s).includes('secretsmanager:GetSecretValue') && JSON.stringify(s.Resource).includes('svc/npm-token')))
    .flatMap((r) => r.Properties.Roles as unknown[]);

  it('is a secret only the builder may read, named to it by ARN, its value nowhere in the template', () => {
    const builder = app.stack.dependencyBuilder;
    expect(json.Resources[logicalId(builder.handler)].Properties.Environment.Variables.NPM_TOKEN_SECRET_ARN).toBe(arn);
    expect(readers).toHaveLength(1);
    expect(JSON.stringify(readers)).toContain(logicalId(builder.role));
    // No other function is told of it: not the api, the worker or a sandbox.
    const functions = Object.values(json.Resources).filter((r) => r.Type === 'AWS::Lambda::Function');
    for (const fn of functions) if (fn !== json.Resources[logicalId(builder.handler)]) expect(JSON.stringify(fn.Properties.Environment ?? {})).not.toContain('npm-token');
  });

  it('must be given as a complete secret ARN', () => {
    expect(() => buildSvcApp({ bundle: false, props: { npmTokenSecretArn: 'npm_live_token_value' } })).toThrow(/complete ARN/);
  });
});
