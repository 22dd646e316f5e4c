import { z } from 'zod';
import type { ScriptVersion } from '../../ports.js';
import { scriptVersionFields } from '../documents/records.js';
import { ENTITY_VALUES } from '../documents/entity-values.js';
import type { scriptSummary } from '../scripts.js';
import type { getFlow, listFlows } from '../flows/flows.js';

/**
 * Scripts and flows as the API answers them: the schemas of what the store keeps (records.ts,
 * entity-values.ts), since the API answers those as they are. They describe the answers in the
 * OpenAPI document and type the CLI's reading of them; the checks below make `npm run check` fail
 * when what the core answers and these schemas part.
 */

/** `scripts/get/p/{path}`, `scripts/get/h/{hash}`. */
export const scriptSchema = scriptVersionFields;
export type ScriptView = z.output<typeof scriptSchema>;
/** `scripts/list`: the latest version of each script, without its content. */
export const scriptListSchema = z.array(scriptVersionFields.omit({ content: true }));
export type ScriptListItem = z.output<typeof scriptListSchema>[number];

/** `flows/get/{path}`: the latest version. */
export const flowSchema = ENTITY_VALUES.flow_version;
export type FlowView = z.output<typeof flowSchema>;
/** `flows/list`: each flow's path and latest version id. */
export const flowListSchema = z.array(ENTITY_VALUES.flow);
export type FlowListItem = z.output<typeof flowListSchema>[number];

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
const agree: [
  Same<ScriptView, ScriptVersion>,
  Same<ScriptListItem, ReturnType<typeof scriptSummary>>,
  Same<FlowView, Awaited<ReturnType<typeof getFlow>>>,
  Same<FlowListItem, Awaited<ReturnType<typeof listFlows>>[number]>,
] = [true, true, true, true];
void agree;
