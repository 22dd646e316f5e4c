import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { z } from 'zod';
import { BULK_CANCEL_MAX, cancelRuns, listRuns } from '../core/console/runs.js';
import { runFilterSchema } from '../core/console/run-filter.js';
import { getRetention, setRetention } from '../core/console/retention.js';
import { parseBody } from '../core/common/validation.js';
import type { CoreDeps } from '../core/deps.js';
import type { AppEnv } from './context.js';
import { readJsonBody } from './json-body.js';
import { freshRights } from './fresh-rights.js';

/**
 * The API the console's pages call (and any client may): the run list with its filters and
 * cursor, its live feed, bulk cancel, and the workspace's retention setting. The pages hold no
 * query of their own.
 */

/** Windmill's cancel_selection takes a bare array of ids; an object adds a reason. */
const jobId = z.string().min(1).max(100);
export const cancelSelection = z.union([
  z.array(jobId).min(1).max(BULK_CANCEL_MAX),
  z.object({ ids: z.array(jobId).min(1).max(BULK_CANCEL_MAX), reason: z.string().max(1000).optional() }),
]);

/** The live list never sends more than one update a second, and ends after a while (EventSource reconnects). */
const FEED_MIN_INTERVAL_MS = 1000;
const FEED_MAX_MS = 10 * 60_000;

export function consoleApiRoutes(deps: CoreDeps, sseKeepAliveMs: number, sseMaxMs?: number) {
  const r = new Hono<AppEnv>();

  r.get('/jobs/runs', async (c) => c.json(await listRuns(deps, c.get('rights'), parseBody(runFilterSchema, c.req.query()))));

  // The first page of the list for these filters, sent again whenever it changed.
  r.get('/jobs/runs_sse', async (c) => {
    const rights = c.get('rights');
    const filter = { ...parseBody(runFilterSchema, c.req.query()), cursor: undefined };
    // Checked before the stream opens, so a refusal is a plain 403.
    const first = await listRuns(deps, rights, filter);
    return streamSSE(c, async (stream) => {
      const started = Date.now();
      let sent = '';
      let page = first;
      let quiet = 0;
      const interval = Math.max(FEED_MIN_INTERVAL_MS, deps.config.pollIntervalMs);
      const until = started + Math.min(FEED_MAX_MS, sseMaxMs ?? FEED_MAX_MS);
      while (!stream.aborted && Date.now() < until) {
        const text = JSON.stringify(page);
        if (text !== sent) {
          await stream.writeSSE({ event: 'runs', data: text });
          sent = text;
          quiet = 0;
        } else if ((quiet += interval) >= sseKeepAliveMs) {
          await stream.write(': keep-alive\n\n');
          quiet = 0;
        }
        await stream.sleep(interval);
        if (stream.aborted) break;
        // Who asks, again: the feed lasts minutes, its caller's token or membership may not.
        const now = await freshRights(deps, c);
        if (!now?.can('jobs', 'read')) break;
        page = await listRuns(deps, now, filter);
      }
    });
  });

  r.post('/jobs/queue/cancel_selection', async (c) => {
    const body = parseBody(cancelSelection, await readJsonBody(c));
    const { ids, reason } = Array.isArray(body) ? { ids: body, reason: undefined } : body;
    return c.json(await cancelRuns(deps, c.get('rights'), ids, reason));
  });

  r.get('/workspaces/retention', async (c) => c.json(await getRetention(deps, c.get('rights'))));
  r.post('/workspaces/retention', async (c) => c.json(await setRetention(deps, c.get('rights'), await readJsonBody(c))));

  return r;
}
