import { html as honoHtml, raw } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';

/**
 * The pages are written with one tagged template, `html`: every value put into it is escaped
 * (element text and quoted attribute values alike) unless it is itself `html` markup, or trusted
 * markup marked with `raw` (the pages' own script and style, sanitized user HTML). Arrays of
 * markup are joined; null, undefined and booleans render as nothing.
 */
export type Markup = HtmlEscapedString;

export function html(strings: TemplateStringsArray, ...values: unknown[]): Markup {
  const out = honoHtml(strings, ...values);
  // Only async components would make it a promise; these templates have none.
  if (out instanceof Promise) throw new Error('page templates must be synchronous');
  return out;
}

export { raw };

/**
 * JSON for embedding inside an inline `<script>`: `<`, `>` and `&` become unicode escapes so no
 * value can close the script element or open a comment, and U+2028/2029 cannot end a line.
 */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/** A link target we are willing to render: relative paths or http(s) URLs, never `javascript:` and friends. */
export function safeHref(url: string | null | undefined): string | null {
  if (!url) return null;
  if (url.startsWith('/') && !url.startsWith('//')) return url;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.href : null;
  } catch {
    return null;
  }
}

/** The origin of an absolute http(s) URL, for a CSP source list; null for relative URLs. */
export function originOf(url: string | null | undefined): string | null {
  if (!url || url.startsWith('/')) return null;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.origin : null;
  } catch {
    return null;
  }
}
