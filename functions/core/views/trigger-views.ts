import { z } from 'zod';
import type { Same } from './same.js';
import { httpTriggerValue } from '../triggers/http-trigger-document.js';
import { scheduleValue } from '../triggers/schedule-document.js';
import type { ScheduleView as CoreScheduleView } from '../triggers/schedules.js';
import type { HttpTriggerView as CoreHttpTriggerView } from '../triggers/http-triggers.js';

/**
 * Schedules and HTTP routes as the API answers them: the stored document (entityView) with its
 * workspace and times. They describe the answers in the OpenAPI document and type the CLI's sync
 * of them; the checks below fail `npm run check` when the core's answers and these schemas part.
 */

const entityFields = { workspace_id: z.string(), created_at: z.string(), updated_at: z.string() };

/** `schedules/create`, `update`, `setenabled`, `get/{path}`, `list` (each). */
export const scheduleSchema = scheduleValue.extend(entityFields);
export type ScheduleView = z.output<typeof scheduleSchema>;

/** `http_triggers/create`, `update`, `get/{path}`, `list` (each). */
export const httpTriggerSchema = httpTriggerValue.extend(entityFields);
export type HttpTriggerView = z.output<typeof httpTriggerSchema>;

const agree: [Same<ScheduleView, CoreScheduleView>, Same<HttpTriggerView, CoreHttpTriggerView>] = [true, true];
void agree;
