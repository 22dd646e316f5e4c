import { describe, expect, it } from 'vitest';
import { newJobId } from '../../../functions/core/common/crypto.js';

describe('job ids', () => {
  it('are UUIDs of version 7: each later than the one before, the time of their creation in front', () => {
    const before = Date.now();
    const ids = Array.from({ length: 10_000 }, () => newJobId());
    const after = Date.now();
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    const millis = (id: string) => parseInt(id.replace(/-/g, '').slice(0, 12), 16);
    expect(millis(ids[0]!)).toBeGreaterThanOrEqual(before);
    expect(millis(ids.at(-1)!)).toBeLessThanOrEqual(after);
  });
});
