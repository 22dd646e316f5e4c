import type * as Re2 from 're2js';
import { onFirstUse, requireHere } from './on-first-use.js';

/**
 * RE2, matching in time linear in the text, for every regular expression a member writes (JSON
 * Schema patterns, token scope globs, OpenAPI selections): on JavaScript's backtracking engine one
 * such expression can hold the service for every caller. Loaded at its first use (on-first-use.ts).
 */
export const re2 = onFirstUse(() => (typeof require === 'function' ? require('re2js') : requireHere('re2js')) as typeof Re2);
