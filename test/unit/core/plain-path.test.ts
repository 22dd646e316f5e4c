import { describe, expect, it } from 'vitest';
import { parsePlainPath, readPlainPath } from '../../../functions/core/flows/plain-path.js';

/** What the sandbox evaluator computes for `expr` (the same `new Function` over the scope). */
function javascript(expr: string, scope: Record<string, unknown>): unknown {
  const names = Object.keys(scope);
  return new Function(...names, `"use strict"; return (${expr}\n);`)(...names.map((n) => scope[n]));
}

const scope = {
  flow_input: { user: { name: 'Ada', 'full-name': 'Ada Lovelace' }, n: 0, empty: null },
  results: { a: 1, b: { rows: [{ id: 7 }, { id: 8 }] }, s0: 'x' },
  previous_result: [10, 20],
};

describe('plain flow expressions read in the core', () => {
  it.each([
    'results.a',
    'results.b.rows[1].id',
    ' flow_input . user . name ',
    'flow_input.user["full-name"]',
    "flow_input.user['name']",
    'flow_input.n',
    'flow_input.empty',
    'previous_result[0]',
    'results',
  ])('%s gives what JavaScript gives', (expr) => {
    expect(readPlainPath(expr, scope)).toEqual({ value: javascript(expr, scope) });
  });

  it.each([
    'results.a + 1',
    'results.s0.length', // not an own property of the data: the evaluator decides
    'results.b.constructor',
    'results.missing',
    'missing.a',
    'flow_input.empty.x',
    'results.b.rows.map((r) => r.id)',
    'results["a\\u0041"]',
    'results[0 + 1]',
    'true',
    '',
  ])('%s is left to the sandbox evaluator', (expr) => {
    expect(readPlainPath(expr, scope)).toBeUndefined();
  });

  it('returns a copy, so step arguments never alias the run state', () => {
    const read = readPlainPath('results.b', scope)!;
    (read.value as { rows: unknown[] }).rows.push('changed');
    expect(scope.results.b.rows).toHaveLength(2);
  });

  it('splits a path into its names', () => {
    expect(parsePlainPath('results.b["x y"][2]')).toEqual(['results', 'b', 'x y', '2']);
  });
});
