import type { Hono } from 'hono';
import type { Principal } from '../../core/identity/auth.js';
import type { CoreDeps } from '../../core/deps.js';
import { ApiError } from '../../core/common/errors.js';
import type { Rights } from '../../core/identity/permissions.js';
import { html, type Markup } from '../html.js';
import { MESSAGE_LINE } from './holding-forms.js';
import { pageAccess, pageResponse, renderPage, notAvailable } from './layout.js';
import { consoleBundle } from './static-assets.js';

/** The pages for what a workspace holds, in the order the navigation shows them. */
export const HOLDING_PAGES = [
  ['schedules', 'Schedules'],
  ['variables', 'Variables'],
  ['resources', 'Connections'],
  ['routes', 'Routes'],
  ['folders', 'Folders'],
  ['groups', 'Groups'],
  ['members', 'Members'],
] as const;

export type HoldingSlug = (typeof HOLDING_PAGES)[number][0];

export interface HoldingContext {
  deps: CoreDeps;
  rights: Rights;
  principal: Principal;
  ws: string;
}

/**
 * `/w/<ws>/<slug>`: the page's body from `render`, framed, its forms and buttons wired by the
 * holdings pages' bundle (browser/holdings-page.ts), the page's one script. What the core refuses
 * this person (a 403 for an operator, a missing item) is the page's answer, as in the API.
 */
export function holdingRoute(r: Hono, deps: CoreDeps, slug: HoldingSlug, title: string, render: (ctx: HoldingContext) => Promise<Markup>): void {
  r.get(`/w/:workspace/${slug}`, async (c) => {
    const access = await pageAccess(deps, c);
    if (!access.ok) return access.response;
    const { rights, principal } = access;
    const ws = rights.workspaceId;
    const frame = { workspace: ws, username: principal.username };
    try {
      const body = await render({ deps, rights, principal, ws });
      const page = html`${holdingTabs(ws, slug)}<h1>${title}</h1>${MESSAGE_LINE}${body}`;
      return pageResponse(c, renderPage({ ...frame, title, script: null, data: {}, body: page, libraries: [consoleBundle('holdings-page')] }));
    } catch (error) {
      if (!(error instanceof ApiError) || (error.status !== 403 && error.status !== 404)) throw error;
      return notAvailable(c, frame, error.message, error.status, holdingTabs(ws, slug));
    }
  });
}

function holdingTabs(ws: string, current: HoldingSlug): Markup {
  const w = encodeURIComponent(ws);
  return html`<nav class="toolbar tabs" aria-label="Workspace">${HOLDING_PAGES.map(([slug, name]) => (slug === current ? html`<strong aria-current="page">${name}</strong>` : html`<a href="/w/${w}/${slug}">${name}</a>`))}</nav>`;
}

/**
 * A table with a header row; `rows` empty shows `empty` instead. A header written `~Name` is of a
 * column whose cells are `wide` (left out on a narrow screen, as the header then is).
 */
export function table(label: string, headers: string[], rows: Markup[], empty: string): Markup {
  if (rows.length === 0) return html`<p class="muted">${empty}</p>`;
  const cells = headers.map((h) => (h.startsWith('~') ? html`<th scope="col" class="wide">${h.slice(1)}</th>` : html`<th scope="col">${h}</th>`));
  return html`<div class="table-wrap"><table aria-label="${label}"><thead><tr>${cells}</tr></thead><tbody>${rows}</tbody></table></div>`;
}
