import { describe, expect, it } from 'vitest';
import { configFromEnv } from '../../../functions/adapters/local/config.js';

describe('the local shell config', () => {
  it('reads the job lease margin (SVC_JOB_LEASE_MARGIN_SECONDS), 60 s by default', () => {
    expect(configFromEnv({}).core.jobLeaseMarginMs).toBe(60_000);
    expect(configFromEnv({ SVC_JOB_LEASE_MARGIN_SECONDS: '' }).core.jobLeaseMarginMs).toBe(60_000);
    expect(configFromEnv({ SVC_JOB_LEASE_MARGIN_SECONDS: '3' }).core.jobLeaseMarginMs).toBe(3_000);
  });

  it('refuses a lease margin that is not a whole number of seconds, naming the variable', () => {
    for (const bad of ['soon', '-1', '1.5']) {
      expect(() => configFromEnv({ SVC_JOB_LEASE_MARGIN_SECONDS: bad })).toThrow(`SVC_JOB_LEASE_MARGIN_SECONDS: expected a non-negative integer, got "${bad}"`);
    }
  });

  it('names the variable of any malformed whole-number setting', () => {
    expect(() => configFromEnv({ SVC_JOB_TIMEOUT_SECONDS: '15m' })).toThrow(/^SVC_JOB_TIMEOUT_SECONDS: expected a non-negative integer, got "15m"$/);
    expect(() => configFromEnv({ PORT: 'http' })).toThrow(/^PORT: /);
  });

  it('refuses a jobs-per-run limit a run cannot keep or the store cannot count to exactly (SVC_MAX_JOBS_PER_RUN)', () => {
    for (const bad of ['0', '9007199254740992', '1e30']) {
      expect(() => configFromEnv({ SVC_MAX_JOBS_PER_RUN: bad }), bad).toThrow(`SVC_MAX_JOBS_PER_RUN: expected a whole number from 1 to 9007199254740991, got "${bad}"`);
    }
    expect(configFromEnv({}).core.maxJobsPerRun).toBe(100_000);
    expect(configFromEnv({ SVC_MAX_JOBS_PER_RUN: '1' }).core.maxJobsPerRun).toBe(1);
  });
});
