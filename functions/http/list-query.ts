import type { Context } from 'hono';
import { z } from 'zod';
import { parseBody } from '../core/common/validation.js';

/**
 * The query of a list route, read strictly: a parameter the route does not have (a Windmill
 * filter svc lacks) or a value it cannot read is a 400 naming it, never an answer as if it had
 * not been asked. `?token=` is left out: it is the caller's credential on every route (bearer.ts).
 */
export function listQueryOf<S extends z.ZodType>(c: Context, schema: S): z.infer<S> {
  const { token: _credential, ...query } = c.req.query();
  return parseBody(schema, query);
}

/** A query flag is `true` or `false`, nothing else (`1`, `yes`: a 400). */
export const flagParam = z.enum(['true', 'false']).optional();

/** The query flag `name`, absent = false; any value but `true` or `false` is a 400 naming it. */
export function queryFlag(c: Context, name: string): boolean {
  return parseBody(z.object({ [name]: flagParam }), { [name]: c.req.query(name) })[name] === 'true';
}

/** Windmill's paging of a list: `page` from 1, `per_page` items (30 when only `page` is given). */
export const pageParams = {
  page: z.coerce.number().int().min(1).max(100_000).optional(),
  per_page: z.coerce.number().int().min(1).max(1000).optional(),
};
export const pageQuery = z.strictObject(pageParams);

/** `flows/list`: a page of the flows, archived ones too with `show_archived=true`. */
export const flowListQuery = z.strictObject({ ...pageParams, show_archived: flagParam });
/** `resources/list`: a page of the resources, of one type with `resource_type`. */
export const resourceListQuery = z.strictObject({ ...pageParams, resource_type: z.string().optional() });

const DEFAULT_PER_PAGE = 30;

/** The asked page of a whole list; everything when neither `page` nor `per_page` was asked for. */
export function pageOf<T>(items: readonly T[], q: { page?: number; per_page?: number }): T[] {
  if (q.page === undefined && q.per_page === undefined) return [...items];
  const perPage = q.per_page ?? DEFAULT_PER_PAGE;
  const start = ((q.page ?? 1) - 1) * perPage;
  return items.slice(start, start + perPage);
}
