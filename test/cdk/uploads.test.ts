import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { uploadSettingsFromEnv } from '../../functions/core/uploads/upload-sessions.js';
import type { SvcStack, SvcStackProps } from '../../lib/svc-stack.js';
import { buildSvcApp, logicalId } from './svc-app.js';

/**
 * Large uploads on AWS (README: Large uploads): clients PUT parts straight to the bucket by
 * presigned URL, so the bucket takes browser PUTs (CORS, the ETag readable) and the api function
 * knows the upload limit and a part size S3 accepts.
 */
type Resource = { Type: string; Properties: Record<string, any> };

const synth = (props?: SvcStackProps) => {
  const { stack } = buildSvcApp({ bundle: false, props });
  return { stack, template: Template.fromStack(stack) };
};
const propsOf = (stack: SvcStack, template: Template, construct: Parameters<typeof logicalId>[0]) =>
  (template.toJSON().Resources[logicalId(construct)] as Resource).Properties;

describe('uploads through S3', () => {
  const { stack, template } = synth();

  it('lets pages PUT parts to the bucket and read their ETags, and nothing else cross-origin', () => {
    expect(propsOf(stack, template, stack.data.bucket).CorsConfiguration.CorsRules).toEqual([
      { Id: 'presigned-upload-parts', AllowedMethods: ['PUT'], AllowedOrigins: ['*'], AllowedHeaders: ['*'], ExposedHeaders: ['ETag'], MaxAge: 3600 },
    ]);
    const custom = synth({ uploadAllowedOrigins: ['https://app.example.com'] });
    expect(propsOf(custom.stack, custom.template, custom.stack.data.bucket).CorsConfiguration.CorsRules[0].AllowedOrigins).toEqual(['https://app.example.com']);
  });

  it('gives the api the upload limit and a part size S3 takes, which the api accepts at start', () => {
    const env = propsOf(stack, template, stack.api.handler).Environment.Variables;
    expect(env.MAX_UPLOAD_BYTES).toBe(String(5 * 1024 ** 3));
    expect(env.UPLOAD_PART_BYTES).toBe(String(64 * 1024 ** 2));
    // A terabyte limit needs larger parts to stay within 10,000.
    const big = synth({ maxUploadBytes: 1024 ** 4 });
    const bigEnv = propsOf(big.stack, big.template, big.stack.api.handler).Environment.Variables;
    expect(uploadSettingsFromEnv(bigEnv, '')).toMatchObject({ maxBytes: 1024 ** 4 });
    expect(Math.ceil(1024 ** 4 / Number(bigEnv.UPLOAD_PART_BYTES))).toBeLessThanOrEqual(10_000);
  });

  it('lets the api role start, complete and abort multipart uploads (which presigned part URLs act as)', () => {
    const statements = Object.values(template.toJSON().Resources as Record<string, Resource>)
      .filter((r) => r.Type === 'AWS::IAM::Policy' && JSON.stringify(r.Properties.Roles).includes(logicalId(stack.api.handler.role!.node.defaultChild as never) ?? ''))
      .flatMap((r) => r.Properties.PolicyDocument.Statement as Array<{ Action: string | string[] }>);
    const actions = statements.flatMap((st) => [st.Action].flat());
    expect(actions).toEqual(expect.arrayContaining(['s3:PutObject', 's3:GetObject', 's3:AbortMultipartUpload']));
  });

  it('refuses an upload limit S3 cannot hold and origins that are not origins', () => {
    expect(() => synth({ maxUploadBytes: 6 * 1024 ** 4 })).toThrow(/maxUploadBytes/);
    expect(() => synth({ uploadAllowedOrigins: ['app.example.com/path'] })).toThrow(/uploadAllowedOrigins/);
  });
});
