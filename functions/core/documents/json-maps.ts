import { z } from 'zod';

/**
 * Schemas for the open maps that stored documents carry (a job's arguments, a flow run's inputs and
 * step results, which module a step job ran): checked whole, returned as they are. z.record parses
 * every key and value through zod and copies the map, ~150 ns an entry; a flow run holds an entry
 * per step in two maps and is parsed at every step's read and write, so a 40-step flow spent most
 * of its flow-run parsing there. A JSON object's keys are strings already, and `unknown` accepts
 * any value: what is left to check is that the map is an object (and, for stringMap, each value a
 * string). The JSON Schema they describe is that of the records they replace.
 */

/** A plain object, as z.record asks: not an array, a Date or another class's instance. */
function isMap(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

function isStringMap(value: unknown): value is Record<string, string> {
  if (!isMap(value)) return false;
  for (const key in value) if (typeof value[key] !== 'string') return false;
  return true;
}

/** An object of any JSON values: z.record(z.string(), z.unknown()), not copied. */
export const jsonObject = z.custom<Record<string, unknown>>(isMap, { message: 'expected an object' }).meta({ type: 'object', additionalProperties: {} });

/** An object of strings: z.record(z.string(), z.string()), not copied. */
export const stringMap = z.custom<Record<string, string>>(isStringMap, { message: 'expected an object of strings' }).meta({ type: 'object', additionalProperties: { type: 'string' } });
