import { z } from 'zod';
import type { ScriptVersion } from '../../ports.js';
import { sha256Hex } from '../common/crypto.js';
import { keyTooLong, MAX_KEY_BYTES, utf8Length } from '../common/key-bytes.js';

/**
 * How runs of a script or flow are scheduled: the modelled service's `cache_ttl`,
 * `concurrent_limit` with `concurrency_time_window_s` and `concurrency_key`, and `priority`, with
 * its field names (docs/flows.md). A script carries them at its top level, a flow in its `value`.
 * `null` is what the modelled service's editor sends for a setting that is off: it is taken as
 * absent.
 */

const DAY = 86_400;

export const runSettingsFields = {
  /** Seconds an identical run (same version, same arguments) answers with a stored result. */
  cache_ttl: z.number().int('whole seconds').positive().max(30 * DAY).nullish(),
  /** At most this many runs per concurrency key at once; the others wait, queued, in order. */
  concurrent_limit: z.number().int('a whole number').positive().max(1000).nullish(),
  /** A run also counts for this many seconds after it started, even once it ended. */
  concurrency_time_window_s: z.number().int('whole seconds').min(0).max(DAY).nullish(),
  /** The key runs are counted under: `$workspace`, `$path` and `$args[name]` are filled in. */
  concurrency_key: z.string().min(1).max(500).nullish(),
  /** Higher runs first when every worker is busy (0 to 100). */
  priority: z.number().int('a whole number').min(0).max(100).nullish(),
};

export const runSettingsShape = z.object(runSettingsFields);
export type RunSettingsInput = z.infer<typeof runSettingsShape>;
export type RunSettings = Pick<ScriptVersion, 'cache_ttl' | 'concurrent_limit' | 'concurrency_time_window_s' | 'concurrency_key' | 'priority'>;

/** The settings that are set, without the nulls and absent ones (what is stored). */
export function definedRunSettings(input: RunSettingsInput): RunSettings {
  const out: RunSettings = {};
  if (input.cache_ttl != null) out.cache_ttl = input.cache_ttl;
  if (input.concurrent_limit != null) out.concurrent_limit = input.concurrent_limit;
  if (input.concurrent_limit != null && input.concurrency_time_window_s != null) out.concurrency_time_window_s = input.concurrency_time_window_s;
  if (input.concurrent_limit != null && input.concurrency_key != null) out.concurrency_key = input.concurrency_key;
  if (input.priority != null && input.priority !== 0) out.priority = input.priority;
  return out;
}

/** The run settings of a script version (stores keep them as one JSON document). */
export function runSettingsOf(v: RunSettings): RunSettings {
  return definedRunSettings(v);
}

/** Stored run settings read back: unknown or malformed keys are dropped, not trusted. */
export function parseStoredRunSettings(json: unknown): RunSettings {
  if (typeof json !== 'string' || json === '') return {};
  try {
    const parsed = runSettingsShape.safeParse(JSON.parse(json));
    return parsed.success ? definedRunSettings(parsed.data) : {};
  } catch {
    return {};
  }
}

/** What a store writes: null when nothing is set. */
export function storedRunSettings(v: RunSettings): string | null {
  const settings = runSettingsOf(v);
  return Object.keys(settings).length ? JSON.stringify(settings) : null;
}

/**
 * The key a run counts under: by default one per script or flow path; a custom key fills in
 * `$workspace`, `$path` and `$args[name]` (an argument's JSON, strings as they are).
 */
export function concurrencyKeyOf(settings: RunSettings, workspaceId: string, kind: 'script' | 'flow', path: string, args: Record<string, unknown>): string | null {
  if (!settings.concurrent_limit) return null;
  if (!settings.concurrency_key) return `${kind}/${path}`;
  return boundedKey(
    settings.concurrency_key
      .replaceAll('$workspace', workspaceId)
      .replaceAll('$path', path)
      .replace(/\$args\[([A-Za-z0-9_]+)\]/g, (_m, name: string) => {
        const v = Object.hasOwn(args, name) ? args[name] : undefined;
        return typeof v === 'string' ? v : v === undefined ? '' : JSON.stringify(v);
      }),
  );
}

/**
 * `key` as a concurrency key: it names the document holding its slots, so it is at most
 * MAX_KEY_BYTES of UTF-8 (bytes, not characters: 1,000 characters of an argument in Chinese are
 * 3,000 bytes, past DynamoDB's 1,024 for a key) and well-formed (a lone surrogate from an argument
 * becomes U+FFFD, as a store would keep it). A longer key keeps its beginning, cut between
 * characters, and ends with `#` and a hash of the whole key, so two keys that differ only past
 * the cut still count apart.
 */
function boundedKey(key: string): string {
  const whole = key.replace(/\p{Cs}/gu, '\uFFFD');
  if (!keyTooLong(whole)) return whole;
  const suffix = `#${sha256Hex(whole).slice(0, 32)}`;
  let kept = '';
  let bytes = 0;
  for (const ch of whole) {
    const size = utf8Length(ch);
    if (bytes + size > MAX_KEY_BYTES - suffix.length) break;
    kept += ch;
    bytes += size;
  }
  return kept + suffix;
}
