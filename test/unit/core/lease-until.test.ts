import { describe, expect, it } from 'vitest';
import { DEFAULT_JOB_LEASE_MARGIN_MS, leaseUntil } from '../../../functions/core/runs/worker.js';

/** A claim's lease: past it, another worker (or flow runner) may take the running job over. */
describe('leaseUntil', () => {
  const now = new Date('2026-01-01T00:00:00.000Z');

  it('lasts the job timeout and the 60 s margin when the instance sets none', () => {
    expect(DEFAULT_JOB_LEASE_MARGIN_MS).toBe(60_000);
    expect(leaseUntil(now, { jobTimeoutMs: 5_000 })).toBe('2026-01-01T00:01:05.000Z');
  });

  it('takes the margin the instance sets (jobLeaseMarginMs)', () => {
    expect(leaseUntil(now, { jobTimeoutMs: 5_000, jobLeaseMarginMs: 3_000 })).toBe('2026-01-01T00:00:08.000Z');
    expect(leaseUntil(now, { jobTimeoutMs: 900_000, jobLeaseMarginMs: 120_000 })).toBe('2026-01-01T00:17:00.000Z');
    expect(leaseUntil(now, { jobTimeoutMs: 5_000, jobLeaseMarginMs: 0 })).toBe('2026-01-01T00:00:05.000Z');
  });
});
