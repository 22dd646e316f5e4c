/**
 * The TypeScript compiler (reading a script's `main` signature and imports, transpiling a job),
 * loaded on first use (on-first-use.ts): one 9 MB file, the largest part of what starting the
 * service would otherwise cost. `ts` stands for the package (`ts.createSourceFile(...)`,
 * `ts.SyntaxKind.X`); types come from `import type TS from 'typescript'`.
 */
import type TS from 'typescript';
import { onFirstUse, requireHere } from './on-first-use.js';

export const ts = onFirstUse(() => (typeof require === 'function' ? require('typescript') : requireHere('typescript')) as typeof TS);
