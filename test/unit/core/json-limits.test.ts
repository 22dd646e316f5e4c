import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, nestsDeeperThan, withinDepthLimit } from '../../../functions/core/common/json-limits.js';

describe('nestsDeeperThan', () => {
  const nested = (depth: number, wrap: (v: unknown) => unknown = (v) => [v]) => {
    let v: unknown = 1;
    for (let i = 0; i < depth; i++) v = wrap(v);
    return v;
  };

  it('counts arrays and objects, scalars at any level count for nothing', () => {
    expect(nestsDeeperThan(1, 0)).toBe(false);
    expect(nestsDeeperThan([], 0)).toBe(true);
    expect(nestsDeeperThan(nested(3), 3)).toBe(false);
    expect(nestsDeeperThan(nested(4, (v) => ({ a: v })), 3)).toBe(true);
    expect(nestsDeeperThan({ wide: Array.from({ length: 1000 }, () => ({ x: [1] })) }, 4)).toBe(false);
  });

  it('walks a value far deeper than the stack allows, without recursion', () => {
    expect(nestsDeeperThan(nested(1_000_000), MAX_JSON_DEPTH)).toBe(true);
  });

  it('turns a too-deep result into the failure ResultTooDeep, and leaves others alone', () => {
    const ok = { ok: true as const, result: nested(MAX_JSON_DEPTH), streamed: false };
    expect(withinDepthLimit(ok)).toBe(ok);
    const deep = withinDepthLimit({ ok: true, result: nested(MAX_JSON_DEPTH + 1), streamed: false });
    expect(deep).toMatchObject({ ok: false, error: { name: 'ResultTooDeep', message: expect.stringContaining(`${MAX_JSON_DEPTH} levels`) } });
  });
});
