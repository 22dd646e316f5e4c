import type { BulkCancelView, RunPageView } from '../../../core/views/run-views.js';

/**
 * The API as the console's bundled pages call it, typed by the same views the OpenAPI document
 * and the CLI are built from (core/views/): a changed answer fails `npm run check` where a page
 * reads it. Same-origin requests with the login session; a lost session goes to the login page.
 */

/** The workspace's API root, from the page's `data-workspace`. */
export function workspaceApi(): string {
  return '/api/w/' + encodeURIComponent(document.body.dataset.workspace ?? '');
}

async function call<T>(path: string, init?: RequestInit): Promise<T> {
  const res = await fetch(workspaceApi() + path, { credentials: 'same-origin', ...init });
  if (res.status === 401) {
    location.assign('/login?next=' + encodeURIComponent(location.pathname + location.search));
    throw new Error('not signed in');
  }
  const answer = (await res.json().catch(() => null)) as unknown;
  if (!res.ok) throw new Error((answer as { error?: { message?: string } } | null)?.error?.message || 'request failed (' + res.status + ')');
  return answer as T;
}

/** `GET jobs/runs`: a page of runs matching the query, and the next page's cursor. */
export function listRuns(query: URLSearchParams): Promise<RunPageView> {
  return call<RunPageView>('/jobs/runs?' + query.toString());
}

/** `GET jobs/runs_sse`: the first page of `listRuns` again whenever it changes, as `runs` events. */
export function followRuns(query: URLSearchParams, onPage: (page: RunPageView) => void): EventSource {
  const feed = new EventSource(workspaceApi() + '/jobs/runs_sse?' + query.toString());
  feed.addEventListener('runs', (event) => onPage(JSON.parse((event as MessageEvent<string>).data) as RunPageView));
  return feed;
}

/** `POST jobs/queue/cancel_selection`: cancels the runs it may, says why not for the others. */
export function cancelSelection(ids: string[]): Promise<BulkCancelView> {
  return call<BulkCancelView>('/jobs/queue/cancel_selection', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ids) });
}
