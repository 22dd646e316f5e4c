import { describe, expect, it } from 'vitest';
import { onFirstUse } from '../../../functions/core/common/on-first-use.js';

describe('packages loaded on first use', () => {
  it('loads nothing until the stand-in is used, then loads once', () => {
    let loads = 0;
    const module = onFirstUse(() => {
      loads++;
      return { version: '1.2.3', double: (n: number) => n * 2 };
    });
    expect(loads).toBe(0);
    expect(module.double(21)).toBe(42);
    expect(module.version).toBe('1.2.3');
    expect('double' in module).toBe(true);
    expect(loads).toBe(1);
  });

  it('stands in for a module that is itself a function with properties', () => {
    const sanitize = Object.assign((text: string) => text.toUpperCase(), { defaults: { tags: ['b'] } });
    const lazy = onFirstUse(() => sanitize);
    expect(lazy('hi')).toBe('HI');
    expect(lazy.defaults.tags).toEqual(['b']);
  });

  it('stands in for the TypeScript compiler, which the schema reader uses', async () => {
    const { ts } = await import('../../../functions/core/common/typescript-compiler.js');
    const file = ts.createSourceFile('x.ts', 'export const a = 1;', ts.ScriptTarget.ES2022);
    expect(file.statements.length).toBe(1);
  });
});
