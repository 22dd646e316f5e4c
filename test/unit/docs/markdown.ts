import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative, resolve } from 'node:path';
import { Lexer, type Token, type Tokens } from 'marked';

/** Helpers the docs tests share: where the docs are, their headings as GitHub slugs, their links. */

export const ROOT = resolve(import.meta.dirname, '../../..');

/** README.md and every page of docs/, as paths relative to the repository. */
export function docFiles(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs.sort()];
}

/** GitHub's heading slug: lower case, punctuation dropped, spaces to hyphens (github-slugger's rule). */
export function slug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a page offers: heading slugs (repeats numbered -1, -2, ... as GitHub does) and `<a id>`s. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  walk(new Lexer().lex(markdown), (token) => {
    if (token.type === 'heading') {
      const base = slug(plainText((token as Tokens.Heading).tokens));
      const count = seen.get(base) ?? 0;
      seen.set(base, count + 1);
      anchors.add(count === 0 ? base : `${base}-${count}`);
    }
  });
  for (const match of markdown.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(match[1]);
  return anchors;
}

/** The headings' plain text, in order (for spec references, which name a heading's number). */
export function headingsOf(markdown: string): string[] {
  const headings: string[] = [];
  walk(new Lexer().lex(markdown), (token) => {
    if (token.type === 'heading') headings.push(plainText((token as Tokens.Heading).tokens));
  });
  return headings;
}

/** Every link target of a page outside code: `[text](href)`, reference definitions, `<a href>`. */
export function linksOf(markdown: string): string[] {
  const links: string[] = [];
  const tokens = new Lexer().lex(markdown);
  walk(tokens, (token) => {
    if (token.type === 'link' || token.type === 'image') links.push((token as Tokens.Link).href);
    if (token.type === 'html') for (const match of token.raw.matchAll(/href="([^"]+)"/g)) links.push(match[1]);
  });
  const definitions = (tokens as Token[] & { links?: Record<string, { href: string }> }).links ?? {};
  for (const definition of Object.values(definitions)) links.push(definition.href);
  return links;
}

function plainText(tokens: Token[] | undefined): string {
  return (tokens ?? [])
    .map((token) => ('tokens' in token && token.tokens ? plainText(token.tokens) : 'text' in token ? String(token.text) : ''))
    .join('');
}

function walk(tokens: Token[], visit: (token: Token) => void): void {
  for (const token of tokens) {
    visit(token);
    if ('tokens' in token && token.tokens) walk(token.tokens, visit);
    if (token.type === 'list') for (const item of (token as Tokens.List).items) walk(item.tokens, visit);
    if (token.type === 'table') {
      const table = token as Tokens.Table;
      for (const cell of [...table.header, ...table.rows.flat()]) walk(cell.tokens, visit);
    }
  }
}

export function read(path: string): string {
  return readFileSync(join(ROOT, path), 'utf8');
}

/** Source files under the given folders whose names end in one of `extensions`, relative to the root. */
export function sourceFiles(folders: string[], extensions: string[]): string[] {
  const out: string[] = [];
  const visit = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
      const path = join(dir, name);
      if (statSync(path).isDirectory()) visit(path);
      else if (extensions.some((ext) => name.endsWith(ext))) out.push(relative(ROOT, path));
    }
  };
  for (const folder of folders) visit(join(ROOT, folder));
  return out.sort();
}

/** The internal links of `page` that do not resolve (a missing file, or an anchor no heading of its file has), explained. */
export function brokenLinks(page: string, markdown: string, anchorsOfFile: (path: string) => Set<string>): string[] {
  const broken: string[] = [];
  for (const href of linksOf(markdown)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('//')) continue; // https:, mailto:, ...
    const [pathPart, anchor] = href.split('#', 2) as [string, string | undefined];
    const target = pathPart === '' ? page : normalize(join(dirname(page), decodeURIComponent(pathPart)));
    if (pathPart !== '' && (target.startsWith('..') || !existsSync(join(ROOT, target)))) {
      broken.push(`${href} (no file ${target})`);
      continue;
    }
    if (anchor === undefined || anchor === '') continue;
    if (!target.endsWith('.md') || (pathPart !== '' && statSync(join(ROOT, target)).isDirectory())) {
      broken.push(`${href} (an anchor into ${target}, which is not a markdown page)`);
      continue;
    }
    if (!anchorsOfFile(target).has(decodeURIComponent(anchor))) broken.push(`${href} (no heading #${anchor} in ${target})`);
  }
  return broken;
}
