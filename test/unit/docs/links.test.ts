import { describe, expect, it } from 'vitest';
import { anchorsOf, brokenLinks, docFiles, read } from './markdown.js';

/**
 * Every internal link of README.md and docs/*.md resolves: the file exists, and an `#anchor`
 * names a heading of that file (GitHub's slug) or an `<a id>` in it. Outside links are not fetched.
 */

describe('links in the docs', () => {
  const cache = new Map<string, Set<string>>();
  const anchorsOfFile = (path: string): Set<string> => {
    if (!cache.has(path)) cache.set(path, anchorsOf(read(path)));
    return cache.get(path)!;
  };

  it.each(docFiles())('every internal link of %s resolves', (page) => {
    expect(brokenLinks(page, read(page), anchorsOfFile)).toEqual([]);
  });

  it('catches a link to a missing page and to a missing heading', () => {
    const page = 'docs/example.md';
    const markdown = '# Example\n\n## Two words\n\n[ok](#two-words) [gone](#three-words) [page](missing.md) [up](../README.md)\n';
    const anchors = (path: string): Set<string> => (path === page ? anchorsOf(markdown) : anchorsOfFile(path));
    expect(brokenLinks(page, markdown, anchors)).toEqual(['#three-words (no heading #three-words in docs/example.md)', 'missing.md (no file docs/missing.md)']);
  });

  it('makes GitHub slugs of headings with code, punctuation and repeats', () => {
    const anchors = anchorsOf('# A\n\n## Payloads (spec 4.2, 4.3)\n\n## `svc.yaml` and `--force`\n\n## Notes\n\n## Notes\n');
    expect([...anchors]).toEqual(['a', 'payloads-spec-42-43', 'svcyaml-and---force', 'notes', 'notes-1']);
  });
});
