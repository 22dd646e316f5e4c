import type * as MarkedModule from 'marked';
import type SanitizeHtml from 'sanitize-html';
import { onFirstUse, requireHere } from '../core/common/on-first-use.js';
import { html, raw, type Markup } from './html.js';

/**
 * Renders an approval step's `description` (spec 2.6): a plain string, one rich-display item, or
 * `{render_all: [...items]}`. Everything here is user-supplied: markdown and html are sanitized,
 * images must be valid base64 and are shown as data: URLs, and nothing ever loads from the network
 * (the page's CSP forbids it), so maps are drawn as an inline SVG plus links to openstreetmap.org.
 */
export function renderDescription(description: unknown): string {
  return descriptionMarkup(description)?.toString() ?? '';
}

/**
 * How much markdown one page renders as markdown: marked takes time quadratic in some inputs
 * (`**a[` repeated, 40 KB took 11 s, the service answering nobody meanwhile), and a flow's author,
 * or what its steps return, writes the descriptions. Markdown past either bound, or that marked
 * cannot parse (`>` nested thousands deep overflows its stack), is shown as the text it is.
 */
const MARKDOWN_ITEM_CHARS = 4_000;
const MARKDOWN_PAGE_CHARS = 8_000;
/**
 * The same for HTML items: sanitize-html is linear but slow (~1.5 us a character), so a
 * description of a few MB held the service for seconds on each view of the page or the inbox.
 */
const HTML_ITEM_CHARS = 50_000;
const HTML_PAGE_CHARS = 100_000;

/** What is left of a page's markdown and HTML (a page with many descriptions, the approvals inbox, shares one). */
export interface RenderBudget {
  markdownChars: number;
  htmlChars: number;
}
export const renderBudget = (): RenderBudget => ({ markdownChars: MARKDOWN_PAGE_CHARS, htmlChars: HTML_PAGE_CHARS });

/** The same, as markup for a page template. */
export function descriptionMarkup(description: unknown, budget: RenderBudget = renderBudget()): Markup | null {
  if (description === null || description === undefined || description === '') return null;
  if (isRecord(description) && Array.isArray(description.render_all)) {
    return html`${description.render_all.map((item, i) => html`${i > 0 ? '\n' : ''}<div class="item">${renderItem(item, budget)}</div>`)}`;
  }
  return html`<div class="item">${renderItem(description, budget)}</div>`;
}

/** Loaded with the first description in markdown (on-first-use.ts). */
const markdown = onFirstUse(() => new ((typeof require === 'function' ? require('marked') : requireHere('marked')) as typeof MarkedModule).Marked({ gfm: true, async: false }));

const DATA_IMAGE = /^data:image\/(png|jpeg|gif|webp|svg\+xml);base64,[A-Za-z0-9+/]+={0,2}$/;

/** Loaded with the first description that has HTML or markdown in it (on-first-use.ts). */
const sanitizeHtml = onFirstUse(() => (typeof require === 'function' ? require('sanitize-html') : requireHere('sanitize-html')) as typeof SanitizeHtml);

const sanitizeOptions = (): SanitizeHtml.IOptions => ({
  allowedTags: [...sanitizeHtml.defaults.allowedTags, 'img', 'del', 's', 'ins', 'details', 'summary'],
  allowedAttributes: {
    a: ['href', 'title', 'rel', 'target'],
    img: ['src', 'alt', 'title', 'width', 'height'],
    th: ['align', 'colspan', 'rowspan'],
    td: ['align', 'colspan', 'rowspan'],
    ol: ['start'],
    code: ['class'],
  },
  allowedClasses: { code: ['language-*'] },
  allowedSchemes: ['http', 'https', 'mailto'],
  // Images may only be inline data: the page cannot load anything else.
  allowedSchemesByTag: { img: ['data'] },
  allowProtocolRelative: false,
  // Relative image URLs pass the scheme check but would be fetched (and refused by the CSP).
  exclusiveFilter: (frame) => frame.tag === 'img' && !DATA_IMAGE.test(frame.attribs.src ?? ''),
  transformTags: {
    // The page's URL is a secret (it carries the signature): never send it as a Referer.
    a: sanitizeHtml.simpleTransform('a', { rel: 'noopener noreferrer nofollow', target: '_blank' }),
  },
});
let SANITIZE_OPTIONS: SanitizeHtml.IOptions | undefined;

/** Sanitized HTML from untrusted HTML: no scripts, event handlers, styles, frames or remote loads. */
export function sanitizeUserHtml(source: string): string {
  return sanitizeHtml(source, (SANITIZE_OPTIONS ??= sanitizeOptions()));
}

export function renderMarkdown(source: string): string {
  return sanitizeUserHtml(markdown.parse(source, { async: false }));
}

/** How each bounded kind of item is rendered, and its bound per item (its bound per page is the budget's). */
const BOUNDED = {
  markdown: { budget: 'markdownChars', itemChars: MARKDOWN_ITEM_CHARS, render: (source: string) => renderMarkdown(source) },
  html: { budget: 'htmlChars', itemChars: HTML_ITEM_CHARS, render: (source: string) => sanitizeUserHtml(source) },
} as const;

/**
 * Markdown or HTML as sanitized HTML, or as plain text when it is longer than an item or what is
 * left of the page may be, or when the renderer fails on it (marked on `>` nested thousands deep).
 */
function boundedItem(kind: keyof typeof BOUNDED, source: string, budget: RenderBudget): Markup {
  const { budget: left, itemChars, render } = BOUNDED[kind];
  if (source.length <= itemChars && source.length <= budget[left]) {
    budget[left] -= source.length;
    try {
      return html`<div class="${kind}">${raw(render(source))}</div>`;
    } catch {
      // Below: what the renderer cannot take is still shown.
    }
  }
  return html`<pre class="text">${source}</pre>`;
}

function renderItem(item: unknown, budget: RenderBudget): Markup {
  if (typeof item === 'string') return html`<p class="text">${item}</p>`;
  if (!isRecord(item)) return renderJson(item);
  const keys = Object.keys(item);
  if (keys.length !== 1) return renderJson(item);
  const [kind] = keys;
  const value = item[kind];
  switch (kind) {
    case 'markdown':
    case 'md':
      return typeof value === 'string' ? boundedItem('markdown', value, budget) : renderJson(item);
    case 'html':
      return typeof value === 'string' ? boundedItem('html', value, budget) : renderJson(item);
    case 'map':
      return renderMap(value);
    case 'table-row-object':
    case 'table-row':
      return renderRowTable(value);
    case 'table-col':
      return renderColumnTable(value);
    case 'png':
    case 'jpeg':
    case 'gif':
      return renderImage(kind, value);
    case 'svg':
      // As an <img>, an SVG document can neither run script nor load anything.
      return typeof value === 'string' ? image('image/svg+xml', Buffer.from(value, 'utf8').toString('base64'), 'svg image') : renderJson(item);
    default:
      return renderJson(item);
  }
}

function renderJson(value: unknown): Markup {
  return html`<pre class="json">${JSON.stringify(value, null, 2) ?? String(value)}</pre>`;
}

function renderImage(kind: string, value: unknown): Markup {
  const data = typeof value === 'string' ? value.replace(/\s+/g, '') : '';
  const valid = data.length > 0 && data.length % 4 === 0 && /^[A-Za-z0-9+/]+={0,2}$/.test(data);
  if (!valid) return html`<p class="invalid">invalid ${kind} image: not base64 data</p>`;
  return image(`image/${kind}`, data, `${kind} image`);
}

function image(mime: string, base64: string, alt: string): Markup {
  return html`<img class="image" alt="${alt}" src="data:${mime};base64,${base64}">`;
}

function cell(value: unknown): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

function table(headers: string[], rows: unknown[][]): Markup {
  const head = html`<thead><tr>${headers.map((h) => html`<th>${h}</th>`)}</tr></thead>`;
  const body = rows.map((row) => html`<tr>${headers.map((_, i) => html`<td>${cell(row[i])}</td>`)}</tr>`);
  return html`<div class="table-wrap"><table>${head}<tbody>${body}</tbody></table></div>`;
}

/** `[{a, b}, ...]` (columns are the union of the keys), or `[[header...], [row...], ...]`. */
function renderRowTable(value: unknown): Markup {
  if (!Array.isArray(value)) return renderJson(value);
  if (value.length > 0 && value.every(Array.isArray)) {
    const [headers, ...rows] = value as unknown[][];
    return table(headers.map(String), rows);
  }
  const headers: string[] = [];
  for (const row of value) if (isRecord(row)) for (const key of Object.keys(row)) if (!headers.includes(key)) headers.push(key);
  const rows = value.map((row) => (isRecord(row) ? headers.map((h) => row[h]) : [row]));
  return table(headers.length > 0 ? headers : ['value'], rows);
}

/** `{a: [1, 2], b: [3, 4]}`: each key a column. */
function renderColumnTable(value: unknown): Markup {
  if (!isRecord(value)) return renderJson(value);
  const headers = Object.keys(value);
  const columns = headers.map((h) => (Array.isArray(value[h]) ? (value[h] as unknown[]) : [value[h]]));
  const height = Math.max(0, ...columns.map((c) => c.length));
  const rows = Array.from({ length: height }, (_, r) => columns.map((c) => c[r]));
  return table(headers, rows);
}

interface Marker {
  lat: number;
  lon: number;
  title?: string;
}

function validCoordinate(lat: unknown, lon: unknown): boolean {
  return typeof lat === 'number' && typeof lon === 'number' && Math.abs(lat) <= 90 && Math.abs(lon) <= 180;
}

function osmLink(lat: number, lon: number, zoom: number): string {
  return `https://www.openstreetmap.org/?mlat=${lat}&mlon=${lon}#map=${zoom}/${lat}/${lon}`;
}

/** Web Mercator, so the sketch keeps the shape a map would show. */
function mercatorY(lat: number): number {
  const rad = (Math.max(-85, Math.min(85, lat)) * Math.PI) / 180;
  return Math.log(Math.tan(Math.PI / 4 + rad / 2));
}

/** Degrees east from one longitude to another, the short way round (-180 to 180). */
function eastOf(fromLon: number, toLon: number): number {
  const d = (((toLon - fromLon) % 360) + 540) % 360 - 180;
  return d === -180 && toLon > fromLon ? 180 : d;
}

function renderMap(value: unknown): Markup {
  if (!isRecord(value) || !validCoordinate(value.lat, value.lon)) return html`<p class="invalid">invalid map: lat and lon must be numbers within range</p>${renderJson(value)}`;
  const center = { lat: value.lat as number, lon: value.lon as number };
  const zoom = typeof value.zoom === 'number' && value.zoom >= 0 && value.zoom <= 19 ? Math.round(value.zoom) : 13;
  const markers: Marker[] = (Array.isArray(value.markers) ? value.markers : [])
    .filter((m): m is Record<string, unknown> => isRecord(m) && validCoordinate(m.lat, m.lon))
    .map((m) => ({ lat: m.lat as number, lon: m.lon as number, title: typeof m.title === 'string' ? m.title : undefined }));

  // Centred on the map's centre, as the map the caption names would be: each marker sits at its
  // offset from there, east to the right and north up (Web Mercator), and a marker across the
  // antimeridian sits on the near side. One scale for both axes, so every marker fits.
  const [width, height, pad] = [480, 240, 30];
  const offset = (p: { lat: number; lon: number }) => ({ dx: eastOf(center.lon, p.lon), dy: ((mercatorY(p.lat) - mercatorY(center.lat)) * 180) / Math.PI });
  const farX = Math.max(0, ...markers.map((m) => Math.abs(offset(m).dx)));
  const farY = Math.max(0, ...markers.map((m) => Math.abs(offset(m).dy)));
  const scale = Math.min(farX > 0 ? (width / 2 - pad) / farX : Infinity, farY > 0 ? (height / 2 - pad) / farY : Infinity);
  const project = (p: { lat: number; lon: number }) => {
    const { dx, dy } = offset(p);
    const k = Number.isFinite(scale) ? scale : 0;
    return { x: (width / 2 + dx * k).toFixed(1), y: (height / 2 - dy * k).toFixed(1) };
  };

  const c = project(center);
  const dots = markers.map((m, i) => {
    const p = project(m);
    const label = m.title ?? `${m.lat}, ${m.lon}`;
    return html`<g class="marker"><circle cx="${p.x}" cy="${p.y}" r="6"><title>${label}</title></circle><text x="${p.x}" y="${p.y}" dx="9" dy="4">${i + 1}</text></g>`;
  });
  const svg = html`<svg class="map" viewBox="0 0 ${width} ${height}" role="img" aria-label="map sketch centred on ${center.lat}, ${center.lon}"><rect width="${width}" height="${height}" class="map-bg"/><path class="map-center" d="M${c.x} ${Number(c.y) - 8}v16M${Number(c.x) - 8} ${c.y}h16"/>${dots}</svg>`;
  const items = markers.map(
    (m, i) => html`<li>${i + 1}. ${m.title ?? 'marker'}: <span class="coords">${m.lat}, ${m.lon}</span> <a href="${osmLink(m.lat, m.lon, zoom)}" target="_blank" rel="noopener noreferrer">open map</a></li>`,
  );
  return html`<figure class="map-figure">${svg}<figcaption>Map centred on <span class="coords">${center.lat}, ${center.lon}</span> (<a href="${osmLink(center.lat, center.lon, zoom)}" target="_blank" rel="noopener noreferrer">openstreetmap.org</a>)${items.length > 0 ? html`<ul class="markers">${items}</ul>` : ''}</figcaption></figure>`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
