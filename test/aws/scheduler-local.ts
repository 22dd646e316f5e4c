import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in for EventBridge Scheduler on loopback (no emulator exists for it): it speaks the
 * service's REST-JSON wire format for the calls svc makes (CreateSchedule `POST`, UpdateSchedule
 * `PUT`, GetSchedule `GET` and DeleteSchedule `DELETE` on `/schedules/{Name}`, the group in the
 * body or the `groupName` query), answers errors as Scheduler does (`x-amzn-ErrorType` header and
 * `Message`), keeps the schedules it was given and records every request, so tests see exactly
 * what the adapter sent. It fires nothing: tests invoke the tick function as Scheduler would,
 * with the target `Input` it holds.
 */

export interface FakeSchedule {
  Name: string;
  GroupName: string;
  ScheduleExpression: string;
  ScheduleExpressionTimezone?: string;
  State: 'ENABLED' | 'DISABLED';
  FlexibleTimeWindow: { Mode: string };
  Description?: string;
  Target: { Arn: string; RoleArn: string; Input?: string; RetryPolicy?: Record<string, number> };
}

export interface SchedulerRequest {
  method: string;
  name: string;
  query: Record<string, string>;
  body: Record<string, any> | null;
}

export interface LocalScheduler {
  endpoint: string;
  schedules: Map<string, FakeSchedule>;
  requests: SchedulerRequest[];
  stop(): Promise<void>;
}

const ARN = (group: string, name: string) => `arn:aws:scheduler:us-east-1:000000000000:schedule/${group}/${name}`;

export async function startLocalScheduler(): Promise<LocalScheduler> {
  const schedules = new Map<string, FakeSchedule>();
  const requests: SchedulerRequest[] = [];
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const m = /^\/schedules\/([^/]+)$/.exec(url.pathname);
    const text = await readBody(req);
    const body = text ? JSON.parse(text) : null;
    const query = Object.fromEntries(url.searchParams);
    const reply = (status: number, payload: unknown, errorType?: string) => {
      res.writeHead(status, { 'content-type': 'application/json', ...(errorType ? { 'x-amzn-errortype': errorType } : {}) });
      res.end(JSON.stringify(payload));
    };
    if (!m) return reply(404, { Message: `no route ${req.method} ${url.pathname}` }, 'UnknownOperationException');
    const name = decodeURIComponent(m[1]);
    requests.push({ method: req.method!, name, query, body });
    const group = body?.GroupName ?? query.groupName ?? 'default';
    const key = `${group}/${name}`;
    const notFound = () => reply(404, { Message: `Schedule ${name} does not exist.` }, 'ResourceNotFoundException');
    if (!/^[0-9a-zA-Z-_.]{1,64}$/.test(name)) return reply(400, { Message: `Name ${name} is not valid` }, 'ValidationException');
    switch (req.method) {
      case 'POST':
        if (schedules.has(key)) return reply(409, { Message: `Schedule ${name} already exists.` }, 'ConflictException');
        if (!body?.ScheduleExpression || !body?.Target?.Arn || !body?.Target?.RoleArn || !body?.FlexibleTimeWindow)
          return reply(400, { Message: 'missing required fields' }, 'ValidationException');
        schedules.set(key, { State: 'ENABLED', ...body, Name: name, GroupName: group });
        return reply(200, { ScheduleArn: ARN(group, name) });
      case 'PUT':
        if (!schedules.has(key)) return notFound();
        schedules.set(key, { State: 'ENABLED', ...body, Name: name, GroupName: group });
        return reply(200, { ScheduleArn: ARN(group, name) });
      case 'GET':
        return schedules.has(key) ? reply(200, { ...schedules.get(key), Arn: ARN(group, name) }) : notFound();
      case 'DELETE':
        if (!schedules.delete(key)) return notFound();
        return reply(200, {});
      default:
        return reply(405, { Message: 'method not allowed' }, 'ValidationException');
    }
  };
  const server: Server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    schedules,
    requests,
    stop: () => new Promise<void>((r) => server.close(() => r())),
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (d) => (text += d));
    req.on('end', () => resolve(text));
    req.on('error', reject);
  });
}

/**
 * Scheduler's deliveries, for the AWS shell on one machine (aws-shell-server.ts): each enabled
 * schedule's target is invoked once a minute with its input, the first time as soon as it is seen
 * (Scheduler would wait for the next minute that matches; the tick function runs from the time it
 * is given, so only the first wait is shorter). Each wake-up is delivered `deliveries` times at
 * once, as Scheduler's at-least-once delivery may: the tick function must not run a tick twice.
 */
export function startWakeUps(
  scheduler: LocalScheduler,
  invoke: (input: unknown) => Promise<unknown>,
  opts: { deliveries: number; everyMs?: number },
): () => void {
  const nextWake = new Map<string, number>();
  const timer = setInterval(() => {
    const now = Date.now();
    for (const [key, s] of scheduler.schedules) {
      if (s.State !== 'ENABLED' || !s.Target.Input) continue;
      const due = nextWake.get(key) ?? now;
      if (due > now) continue;
      nextWake.set(key, due + (opts.everyMs ?? 60_000));
      const input = JSON.parse(s.Target.Input.replace('<aws.scheduler.scheduled-time>', new Date(due).toISOString()));
      for (let i = 0; i < opts.deliveries; i++) {
        invoke(input).catch((error: unknown) =>
          console.error(JSON.stringify({ level: 'error', msg: 'schedule tick failed', error: String(error) })),
        );
      }
    }
    for (const key of nextWake.keys()) if (!scheduler.schedules.has(key)) nextWake.delete(key);
  }, 250);
  return () => clearInterval(timer);
}
