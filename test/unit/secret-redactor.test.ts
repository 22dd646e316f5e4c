import { describe, expect, it } from 'vitest';
import { secretRedactor } from '../../functions/core/common/secret-redactor.js';

describe('secretRedactor', () => {
  const SECRET = 'eyJhbGciOi.payload.sig';
  const all = (chunks: string[]) => {
    const r = secretRedactor(SECRET, '[x]');
    return chunks.map((c) => r.push(c)).join('') + r.flush();
  };

  it('replaces the secret within a chunk and passes other text on at once', () => {
    const r = secretRedactor(SECRET, '[x]');
    expect(r.push(`TOKEN=${SECRET}\n`)).toBe('TOKEN=[x]\n');
    expect(r.push('plain line\n')).toBe('plain line\n');
    expect(r.flush()).toBe('');
  });

  it('replaces the secret cut across chunks, however it is cut', () => {
    const text = `a ${SECRET} b ${SECRET}`;
    for (let cut = 0; cut <= text.length; cut++) {
      for (let second = cut; second <= text.length; second += 3) {
        expect(all([text.slice(0, cut), text.slice(cut, second), text.slice(second)])).toBe('a [x] b [x]');
      }
    }
  });

  it('holds back only an end that could begin the secret, and gives it back when it does not', () => {
    const r = secretRedactor(SECRET, '[x]');
    expect(r.push('value eyJh')).toBe('value ');
    expect(r.push('ello\n')).toBe('eyJhello\n');
    expect(r.push('ends with e')).toBe('ends with ');
    expect(r.flush()).toBe('e');
  });
});
