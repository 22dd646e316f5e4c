import { describe, expect, it } from 'vitest';
import { highlightSource } from '../../../functions/http/console/highlight.js';
import { LANGUAGES } from '../../../functions/ports.js';

/** The item page's server-side highlighting: every svc language has a grammar, and markup in a source stays text. */
describe('highlightSource', () => {
  it('highlights each language with its grammar', () => {
    const samples: Record<(typeof LANGUAGES)[number], [string, string]> = {
      bun: ['export const n: number = 1', '<span class="hljs-keyword">export</span>'],
      deno: ['import { x } from "./x.ts"', '<span class="hljs-keyword">import</span>'],
      nativets: ['async function main() {}', '<span class="hljs-keyword">async</span>'],
      python3: ['def main():\n    return None', '<span class="hljs-keyword">def</span>'],
      bash: ['echo "$1"', '<span class="hljs-built_in">echo</span>'],
      go: ['package inner\n\nfunc main() (int, error) { return 1, nil }', '<span class="hljs-keyword">func</span>'],
    };
    for (const language of LANGUAGES) {
      const [source, expected] = samples[language];
      expect(highlightSource(source, language).toString(), language).toContain(expected);
    }
  });

  it('escapes what the source holds, so a script cannot put markup on the page', () => {
    const out = highlightSource('# </code><script>alert(1)</script>\necho "<img src=x onerror=alert(1)>"', 'bash').toString();
    expect(out).not.toContain('<script>');
    expect(out).not.toContain('<img');
    expect(out).toContain('&lt;/code&gt;&lt;script&gt;');
  });
});
