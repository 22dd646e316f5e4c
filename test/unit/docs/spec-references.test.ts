import { describe, expect, it } from 'vitest';
import { headingsOf, read, sourceFiles } from './markdown.js';

/**
 * Every "spec N.N" reference in the code names a numbered heading of docs/spec.md, whose sections
 * follow the numbering of the contract svc was built to. Lists and ranges count each number:
 * "spec 1.4, 2.7, 3, 7.7", "spec 3 and 5.8", "spec 2.1-2.2".
 */

const FOLDERS = ['functions', 'bin', 'lib', 'clients', 'statemachines', 'bench', 'test'];
const EXTENSIONS = ['.ts', '.js', '.mjs', '.cjs', '.py', '.go', '.sh'];
const NUMBER = String.raw`\d+(?:\.\d+)*`;
const REFERENCE = new RegExp(String.raw`\bspec\s*§?\s*(${NUMBER}(?:\s*(?:,|and|-|–|/)\s*§?\s*${NUMBER})*)`, 'gi');

/** The section numbers the references in `source` name. */
export function specReferences(source: string): string[] {
  return [...source.matchAll(REFERENCE)].flatMap((m) => [...m[1].matchAll(new RegExp(NUMBER, 'g'))].map((n) => n[0]));
}

/** The numbers of docs/spec.md's headings: "## 4. Endpoints" is 4, "### 4.2 Request payload rules" is 4.2. */
export function specSections(markdown: string): Set<string> {
  return new Set(headingsOf(markdown).flatMap((heading) => /^(\d+(?:\.\d+)*)\.?\s/.exec(heading)?.[1] ?? []));
}

describe('spec references in the code', () => {
  it('name sections that docs/spec.md has', () => {
    const sections = specSections(read('docs/spec.md'));
    const missing: string[] = [];
    let count = 0;
    for (const file of sourceFiles(FOLDERS, EXTENSIONS)) {
      if (file.startsWith('test/unit/docs/')) continue; // this test's own examples
      for (const number of specReferences(read(file))) {
        count += 1;
        if (!sections.has(number)) missing.push(`${file}: spec ${number}`);
      }
    }
    expect(count).toBeGreaterThan(100);
    expect(missing).toEqual([]);
  });

  it('reads lists, ranges and section signs, and numbered headings', () => {
    expect(specReferences('(spec 1.4, 2.7, 3, 7.7) spec 3 and 5.8; spec 2.1-2.2; spec §4.2 rule 5; the spec says')).toEqual([
      '1.4', '2.7', '3', '7.7', '3', '5.8', '2.1', '2.2', '4.2',
    ]);
    expect([...specSections('# Title\n\n## 1. What\n\n### 1.2 Webhooks\n\n## Notes 3\n')]).toEqual(['1', '1.2']);
  });
});
