import { describe, expect, it } from 'vitest';
import { awsConfigFromEnv, loadSecrets, requireAdminToken, requireSandboxFunctions, signingKeyFromHex } from '../../functions/adapters/aws/aws-config.js';

const KEY_HEX = 'ab'.repeat(32);
const base = {
  TABLE_NAME: 'svc-table',
  BUCKET_NAME: 'svc-bucket',
  JOBS_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/jobs',
  SECRETS_KMS_KEY_ID: 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab',
  SIGNING_KEY_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:signing',
  ADMIN_TOKEN_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:admin',
};

describe('AWS shell config', () => {
  it('reads the stack environment, with defaults that fit Lambda and DynamoDB limits', () => {
    const config = awsConfigFromEnv(base);
    expect(config).toMatchObject({
      tableName: 'svc-table',
      bucketName: 'svc-bucket',
      jobsQueueUrl: base.JOBS_QUEUE_URL,
      secretsKmsKeyId: base.SECRETS_KMS_KEY_ID,
      defaultWorkspace: 'main',
    });
    expect(config.secrets).toEqual({ signingKey: { arn: base.SIGNING_KEY_SECRET_ARN }, adminToken: { arn: base.ADMIN_TOKEN_SECRET_ARN } });
    expect(config.maxBodyBytes).toBeLessThan(6 * 1024 * 1024);
    expect(config.core).toMatchObject({ baseInternalUrl: '', pollIntervalMs: 100, includeHeaders: [] });
    expect(config.core.jobTimeoutMs).toBeLessThanOrEqual(900_000);
  });

  it('takes every setting the stack may pass', () => {
    const config = awsConfigFromEnv({
      ...base,
      SYNC_MAX_WAIT_SECONDS: '3',
      JOB_TIMEOUT_SECONDS: '2',
      MAX_OUTPUT_BYTES: '1000',
      MAX_BODY_BYTES: '2000',
      INCLUDE_HEADERS: 'X-Tag, X-Other',
      API_BASE_URL: 'https://abc.execute-api.eu-west-1.amazonaws.com/prod/',
      SANDBOX_NODE_FUNCTION: 'node-fn',
      SANDBOX_PYTHON_FUNCTION: 'python-fn',
      SVC_DEFAULT_WORKSPACE: 'team',
      SVC_WEBHOOK_RETRY_FIRST_MS: '100',
      SVC_WEBHOOK_RETRY_MAX_MS: '400',
      SVC_WEBHOOK_GIVE_UP_HOURS: '2',
      SVC_WEBHOOK_TIMEOUT_MS: '300',
      SVC_WEBHOOK_ALLOW_PRIVATE: '1',
      MAX_UPLOAD_BYTES: String(10 * 1024 ** 3),
      UPLOAD_PART_BYTES: String(128 * 1024 ** 2),
    });
    expect(config.core).toEqual({
      baseInternalUrl: 'https://abc.execute-api.eu-west-1.amazonaws.com/prod',
      flowMaxWhileIterations: 1000,
      flowMaxLoopItems: 10_000,
      maxRunDepth: 32,
      maxQueuedJobsPerWorkspace: 10_000,
      maxJobsPerRun: 100_000,
      jobTimeoutMs: 2_000,
      // The stack sets no lease margin: the default.
      jobLeaseMarginMs: 60_000,
      maxOutputBytes: 1000,
      syncMaxWaitMs: 3_000,
      includeHeaders: ['X-Tag', 'X-Other'],
      pollIntervalMs: 100,
      cancelPollIntervalMs: 1000,
      webhookRetry: { firstMs: 100, maxMs: 400, giveUpAfterMs: 7_200_000, timeoutMs: 300 },
      uploads: { maxBytes: 10 * 1024 ** 3, partBytes: 128 * 1024 ** 2, urlSeconds: 3600 },
    });
    expect(config.webhookAllowPrivate).toBe(true);
    expect(config.maxBodyBytes).toBe(2000);
    expect(config.defaultWorkspace).toBe('team');
    expect(requireSandboxFunctions(config)).toEqual({ node: 'node-fn', python: 'python-fn' });
  });

  it('takes a lease margin outside the stack (tests), 60 s otherwise', () => {
    expect(awsConfigFromEnv(base).core.jobLeaseMarginMs).toBe(60_000);
    expect(awsConfigFromEnv({ ...base, JOB_LEASE_MARGIN_SECONDS: '3' }).core.jobLeaseMarginMs).toBe(3_000);
  });

  it('names what is missing or malformed', () => {
    expect(() => awsConfigFromEnv({ ...base, TABLE_NAME: '' })).toThrow(/TABLE_NAME/);
    // Secret variables cannot be stored or read without it: fail at cold start, not on first use.
    expect(() => awsConfigFromEnv({ ...base, SECRETS_KMS_KEY_ID: undefined })).toThrow(/SECRETS_KMS_KEY_ID must be set/);
    expect(() => awsConfigFromEnv({ ...base, SIGNING_KEY_SECRET_ARN: undefined })).toThrow(/SIGNING_KEY_SECRET_ARN \(or, outside AWS, SIGNING_KEY_HEX\)/);
    expect(() => awsConfigFromEnv({ ...base, JOB_TIMEOUT_SECONDS: 'soon' })).toThrow(/JOB_TIMEOUT_SECONDS/);
    expect(() => awsConfigFromEnv({ ...base, JOB_LEASE_MARGIN_SECONDS: '-5' })).toThrow(/JOB_LEASE_MARGIN_SECONDS: expected a non-negative integer/);
    expect(() => requireSandboxFunctions(awsConfigFromEnv(base))).toThrow(/SANDBOX_NODE_FUNCTION/);
  });

  it('refuses a jobs-per-run limit a run cannot keep or DynamoDB cannot count to, at cold start rather than as a 500 on every run a job starts', () => {
    // A run is at least its own job; DynamoDB's client refuses numbers past 2^53 - 1 in a condition.
    for (const bad of ['0', '9007199254740992', '1e30']) {
      expect(() => awsConfigFromEnv({ ...base, MAX_JOBS_PER_RUN: bad }), bad).toThrow(`MAX_JOBS_PER_RUN: expected a whole number from 1 to 9007199254740991, got "${bad}"`);
    }
    expect(awsConfigFromEnv({ ...base, MAX_JOBS_PER_RUN: '1' }).core.maxJobsPerRun).toBe(1);
    expect(awsConfigFromEnv({ ...base, MAX_JOBS_PER_RUN: '9007199254740991' }).core.maxJobsPerRun).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('leaves the admin token out where the stack does not give it (the worker), and the api asks for it', async () => {
    const worker = awsConfigFromEnv({ ...base, ADMIN_TOKEN_SECRET_ARN: undefined });
    expect(worker.secrets.adminToken).toBeNull();
    const secrets = await loadSecrets(worker.secrets, async () => KEY_HEX);
    expect(secrets.adminToken).toBeNull();
    expect(() => requireAdminToken(secrets)).toThrow(/ADMIN_TOKEN_SECRET_ARN \(or, outside AWS, SVC_ADMIN_TOKEN\)/);
  });

  it('reads each secret once from Secrets Manager, or from the environment outside AWS', async () => {
    const reads: string[] = [];
    const secrets = await loadSecrets(awsConfigFromEnv(base).secrets, async (arn) => {
      reads.push(arn);
      return arn === base.SIGNING_KEY_SECRET_ARN ? `${KEY_HEX}\n` : 'admin-token';
    });
    expect(reads.sort()).toEqual([base.ADMIN_TOKEN_SECRET_ARN, base.SIGNING_KEY_SECRET_ARN].sort());
    expect(secrets.adminToken).toBe('admin-token');
    expect(Buffer.from(secrets.signingKey).toString('hex')).toBe(KEY_HEX);

    const fromEnv = awsConfigFromEnv({ ...base, SIGNING_KEY_SECRET_ARN: '', ADMIN_TOKEN_SECRET_ARN: '', SIGNING_KEY_HEX: KEY_HEX, SVC_ADMIN_TOKEN: 't' });
    const loaded = await loadSecrets(fromEnv.secrets, async () => expect.fail('no Secrets Manager call expected'));
    expect(loaded.adminToken).toBe('t');
    expect(loaded.signingKey).toHaveLength(32);
  });

  it('accepts only a 32-byte hex signing key, without echoing it', () => {
    expect(signingKeyFromHex(KEY_HEX.toUpperCase())).toHaveLength(32);
    for (const bad of ['', 'ab'.repeat(16), 'zz'.repeat(32), `${KEY_HEX}00`]) {
      let message = '';
      try {
        signingKeyFromHex(bad);
      } catch (e) {
        message = (e as Error).message;
      }
      expect(message).toMatch(/64 hex characters/);
      if (bad) expect(message).not.toContain(bad);
    }
  });
});
