import { afterAll, describe, expect, it, vi } from 'vitest';
import { errorOf, makeRunner, request, runOnce } from './runtime-helpers.js';

// A machine where `npm ci` brought no Deno binary for its platform (or a bundle without it).
vi.mock('../../../functions/runtime/deno-binary.js', async (original) => ({
  ...(await original<typeof import('../../../functions/runtime/deno-binary.js')>()),
  denoBinary: () => undefined,
}));

const { runner, dispose } = makeRunner();
afterAll(dispose);

describe('without a Deno binary', () => {
  it('a deno job fails saying Deno is missing, and never runs on Node', async () => {
    const { outcome, log } = await runOnce(runner, request('deno', 'export function main() { console.log("ran"); return 1; }'));
    expect(errorOf(outcome)).toEqual({ name: 'ExecutionErr', message: expect.stringMatching(/^Deno is not installed on this runner/) });
    expect(log).toBe('');
  });
});
