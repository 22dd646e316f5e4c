import { statSync, utimesSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { inputsFingerprint } from '../../../bin/build.js';

/** `npm start` skips the build when dist/ was made from the inputs as they are (bin/build.js --if-stale). */
describe('build inputs fingerprint', () => {
  it('is stable while nothing changes and moves when a source is touched', () => {
    const source = new URL('../../../functions/version.ts', import.meta.url);
    const { atime, mtime } = statSync(source);
    try {
      // Whole seconds both ways: a restored time must equal the one set, to the last digit.
      utimesSync(source, atime, new Date(Math.floor(mtime.getTime() / 1000) * 1000));
      const before = inputsFingerprint();
      expect(inputsFingerprint()).toBe(before);
      utimesSync(source, atime, new Date(Math.floor(mtime.getTime() / 1000) * 1000 + 2000));
      expect(inputsFingerprint()).not.toBe(before);
      utimesSync(source, atime, new Date(Math.floor(mtime.getTime() / 1000) * 1000));
      expect(inputsFingerprint()).toBe(before);
    } finally {
      utimesSync(source, atime, mtime);
    }
  });
});
