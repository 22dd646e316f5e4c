import { Hono } from 'hono';
import {
  createSchedule,
  deleteSchedule,
  getSchedule,
  listSchedules,
  setScheduleEnabled,
  updateSchedule,
} from '../core/triggers/schedules.js';
import type { CoreDeps } from '../core/deps.js';
import type { AppEnv } from './context.js';
import { readJsonBody } from './json-body.js';
import { listQueryOf, pageQuery, pageOf } from './list-query.js';

/** Managing schedules (issue 21), under `/api/w/:workspace`. */
export function scheduleRoutes(deps: CoreDeps) {
  const r = new Hono<AppEnv>();
  r.post('/schedules/create', async (c) => c.json(await createSchedule(deps, c.get('rights'), await readJsonBody(c)), 201));
  r.post('/schedules/update/:path{.+}', async (c) =>
    c.json(await updateSchedule(deps, c.get('rights'), c.req.param('path'), await readJsonBody(c))),
  );
  r.post('/schedules/setenabled/:path{.+}', async (c) =>
    c.json(await setScheduleEnabled(deps, c.get('rights'), c.req.param('path'), await readJsonBody(c))),
  );
  r.get('/schedules/get/:path{.+}', async (c) => c.json(await getSchedule(deps, c.get('rights'), c.req.param('path'))));
  r.get('/schedules/list', async (c) => {
    const q = listQueryOf(c, pageQuery);
    return c.json(pageOf(await listSchedules(deps, c.get('rights')), q));
  });
  r.delete('/schedules/delete/:path{.+}', async (c) => {
    await deleteSchedule(deps, c.get('rights'), c.req.param('path'));
    return c.text(`deleted schedule ${c.req.param('path')}`);
  });
  return r;
}
