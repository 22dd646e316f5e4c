import { html, raw, type Markup } from './html.js';
import { staticPage } from './page-shell.js';

/**
 * `/openapi`: svc's API reference, read from the OpenAPI document itself (GET /api/openapi.json),
 * so the page cannot say something the document does not. Server-rendered; no script.
 */

type Json = Record<string, unknown>;

const STYLE = [
  'body{font-family:system-ui,sans-serif;max-width:72rem;margin:2rem auto;padding:0 1rem;line-height:1.4}',
  'h2{margin-top:2rem;border-bottom:1px solid #ddd}.op{margin:.8rem 0;padding:.4rem .6rem;border-left:4px solid #ccc}',
  '.method{display:inline-block;min-width:4rem;font-weight:bold;text-transform:uppercase}.path{font-family:monospace}',
  '.auth{color:#555;font-size:.9em}pre{background:#f5f5f5;padding:.6rem;overflow:auto;max-height:24rem;font-size:.8em}',
  'details{margin:.3rem 0}nav a{margin-right:.8rem}',
].join('');
const PAGE = staticPage('', STYLE);

export function renderApiReferencePage(document: Json): string {
  const info = document.info as Json;
  const paths = document.paths as Record<string, Record<string, Json>>;
  const schemas = ((document.components as Json).schemas ?? {}) as Record<string, Json>;
  const byTag = new Map<string, { method: string; path: string; op: Json }[]>();
  for (const [path, methods] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const tag = ((op.tags as string[] | undefined) ?? ['other'])[0]!;
      byTag.set(tag, [...(byTag.get(tag) ?? []), { method, path, op }]);
    }
  }
  const sections = [...byTag].map(([tag, ops]) => html`<section><h2 id="${anchor(tag)}">${tag}</h2>${ops.map((o) => operation(o.method, o.path, o.op, schemas))}</section>`);
  return PAGE(
    `${String(info.title)} reference`,
    html`<body><h1>${String(info.title)} ${String(info.version)}</h1><p>${String(info.description ?? '')}</p>
<p>The machine-readable document: <a href="/api/openapi.json">/api/openapi.json</a> (OpenAPI 3.1). Request bodies are the schemas the API validates with.</p>
<nav>${[...byTag.keys()].map((tag) => html`<a href="#${anchor(tag)}">${tag}</a>`)}</nav>${sections}`,
  );
}

function operation(method: string, path: string, op: Json, schemas: Record<string, Json>): Markup {
  const security = op.security as Json[];
  const auth = security.length === 0 ? 'no token (public, or the URL or the caller proves itself)' : 'an API token or the session cookie';
  const parameters = (op.parameters as Json[] | undefined) ?? [];
  const body = op.requestBody as Json | undefined;
  const responses = op.responses as Record<string, Json>;
  return html`<div class="op" id="${String(op.operationId)}"><div><span class="method">${method}</span> <span class="path">${path}</span></div>
<div>${String(op.summary)}</div><div class="auth">Authentication: ${auth}</div>
${parameters.length > 0 ? html`<div>Parameters: ${parameters.map((p, i) => html`${i > 0 ? ', ' : ''}<code>${String(p.name)}</code> (${String(p.in)}${p.required ? ', required' : ''})`)}</div>` : ''}
${body ? html`<details><summary>Request body${body.required ? '' : ' (optional)'}</summary>${schemaBlock(body, schemas)}</details>` : ''}
${Object.entries(responses)
  .filter(([status]) => status !== 'default')
  .map(([status, r]) => html`<details><summary>${status}: ${String(r.description)}</summary>${schemaBlock(r, schemas)}</details>`)}</div>`;
}

/** The body's JSON Schema, its named component shown in full. */
function schemaBlock(part: Json, schemas: Record<string, Json>): Markup | string {
  const content = part.content as Record<string, Json> | undefined;
  if (!content) return '';
  return html`${Object.entries(content).map(([type, media]) => {
    const schema = media.schema as Json;
    const ref = typeof schema.$ref === 'string' ? schema.$ref.replace('#/components/schemas/', '') : null;
    const shown = ref ? (schemas[ref] ?? schema) : schema;
    return html`<div>${type}${ref ? html` — <code>${ref}</code>` : ''}</div><pre>${raw(escape(JSON.stringify(shown, null, 2)))}</pre>`;
  })}`;
}

function anchor(tag: string): string {
  return `tag-${tag.replace(/[^a-z0-9]+/gi, '-')}`;
}

function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
