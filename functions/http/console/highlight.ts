import type HighlightJs from 'highlight.js/lib/core';
import type { LanguageFn } from 'highlight.js';
import { onFirstUse, requireHere } from '../../core/common/on-first-use.js';
import { html, raw, type Markup } from '../html.js';
import type { Language } from '../../ports.js';

/**
 * A script's source as highlighted HTML, done on the server with highlight.js (only the grammars
 * svc's languages need): the page ships no highlighter, and the result is spans with `hljs-*`
 * classes, coloured by the console's style sheet (the CSP allows no inline style).
 */

/** Loaded, with its grammars, by the first page that shows a script's source (on-first-use.ts). */
const hljs = onFirstUse(() => {
  const bundled = typeof require === 'function';
  const core = (bundled ? require('highlight.js/lib/core') : requireHere('highlight.js/lib/core')) as typeof HighlightJs;
  // Literal names, so that esbuild finds each grammar to bundle.
  core.registerLanguage('typescript', (bundled ? require('highlight.js/lib/languages/typescript') : requireHere('highlight.js/lib/languages/typescript')) as LanguageFn);
  core.registerLanguage('python', (bundled ? require('highlight.js/lib/languages/python') : requireHere('highlight.js/lib/languages/python')) as LanguageFn);
  core.registerLanguage('bash', (bundled ? require('highlight.js/lib/languages/bash') : requireHere('highlight.js/lib/languages/bash')) as LanguageFn);
  core.registerLanguage('go', (bundled ? require('highlight.js/lib/languages/go') : requireHere('highlight.js/lib/languages/go')) as LanguageFn);
  return core;
});

const GRAMMAR: Record<Language, string> = { bun: 'typescript', deno: 'typescript', nativets: 'typescript', python3: 'python', bash: 'bash', go: 'go' };

/**
 * Past these a source is shown as plain text. highlight.js takes a few microseconds a character
 * and time quadratic in a line's length, while the page waits and the service with it: 80 KB of
 * `funca` on one line took 14 s, and a script may be megabytes. Within them, at most about half a
 * second, and every script a person writes is highlighted.
 */
const MAX_HIGHLIGHTED_CHARS = 50_000;
const MAX_HIGHLIGHTED_LINE = 500;

function highlightable(source: string): boolean {
  if (source.length > MAX_HIGHLIGHTED_CHARS) return false;
  let lineStart = 0;
  for (let i = source.indexOf('\n'); ; i = source.indexOf('\n', i + 1)) {
    const end = i === -1 ? source.length : i;
    if (end - lineStart > MAX_HIGHLIGHTED_LINE) return false;
    if (i === -1) return true;
    lineStart = i + 1;
  }
}

/** highlight.js escapes the text it is given (`<`, `&`, quotes), so the markup is safe to insert. */
export function highlightSource(source: string, language: Language): Markup {
  if (!highlightable(source)) return html`${source}`;
  return raw(hljs.highlight(source, { language: GRAMMAR[language], ignoreIllegals: true }).value);
}

/** The colours of the classes highlightSource emits, for the console's style sheet. */
export const HIGHLIGHT_STYLE =
  '.hljs-keyword,.hljs-built_in,.hljs-type{color:#a626a4}.hljs-string,.hljs-regexp{color:#0a7d32}.hljs-number,.hljs-literal{color:#0b57d0}' +
  '.hljs-comment{color:#6a737d;font-style:italic}.hljs-title,.hljs-title.function_{color:#8a3b00}.hljs-variable,.hljs-params,.hljs-attr{color:#b00020}.hljs-meta{color:#555}';
