import { Option, type Command } from 'commander';
import { z } from 'zod';
import { syncOptionShape, type SyncOptions } from './config-schema.js';
import { CliError, EXIT } from './errors.js';

/**
 * Flags for the svc.yaml sync options, made from the same zod shape as svc.yaml itself, so every
 * switch has its flag and no flag drifts from its key: `skipVariables` -> `--skip-variables` and
 * `--no-skip-variables`, `parallel` -> `--parallel <n>`. A flag given wins over svc.yaml (and over
 * the workspace entry's overrides); a flag not given leaves the file's value.
 */

const kebab = (key: string) => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

const LIST_KEYS = ['includes', 'extraIncludes', 'excludes'] as const;
/** Keys that already have a flag of their own (--message, --promotion). */
const OWN_FLAG = new Set(['message', 'promotion']);

const describe = (key: string) => (syncOptionShape as Record<string, z.ZodType>)[key].description;

export const SWITCHES_GROUP = 'svc.yaml switches (a flag wins over the file):';

export function addSyncOptionFlags(cmd: Command): Command {
  for (const [key, schema] of Object.entries(syncOptionShape)) {
    if (OWN_FLAG.has(key)) continue;
    const inner = (schema as z.ZodOptional<z.ZodType>).unwrap();
    const what = describe(key) ?? key.replace(/([A-Z])/g, ' $1').toLowerCase();
    if (inner instanceof z.ZodBoolean) {
      cmd.addOption(new Option(`--${kebab(key)}`, `svc.yaml ${key}: true (${what})`).helpGroup(SWITCHES_GROUP));
      cmd.addOption(new Option(`--no-${kebab(key)}`, `svc.yaml ${key}: false`).helpGroup(SWITCHES_GROUP));
    } else if ((LIST_KEYS as readonly string[]).includes(key)) {
      cmd.addOption(new Option(`--${kebab(key)} <glob...>`, `svc.yaml ${key} (${what})`).helpGroup(SWITCHES_GROUP));
    } else if (inner instanceof z.ZodEnum) {
      cmd.addOption(new Option(`--${kebab(key)} <value>`, `svc.yaml ${key} (${what})`).choices(inner.options as string[]).helpGroup(SWITCHES_GROUP));
    } else if (inner instanceof z.ZodLiteral) {
      cmd.addOption(new Option(`--${kebab(key)} <value>`, `svc.yaml ${key} (${what})`).choices([...inner.values].map(String)).helpGroup(SWITCHES_GROUP));
    } else {
      cmd.addOption(new Option(`--${kebab(key)} <n>`, `svc.yaml ${key} (${what})`).helpGroup(SWITCHES_GROUP));
    }
  }
  cmd.addOption(new Option('--include-secrets', 'same as --no-skip-secrets: sync secret variables (encrypted)').helpGroup(SWITCHES_GROUP));
  return cmd;
}

/** The options the flags set, validated like svc.yaml (a bad --parallel is a usage error). */
export function syncOptionsFromFlags(values: Record<string, unknown>): Partial<SyncOptions> {
  const raw: Record<string, unknown> = {};
  for (const key of Object.keys(syncOptionShape)) {
    if (OWN_FLAG.has(key) || values[key] === undefined) continue;
    raw[key] = key === 'parallel' ? Number(values[key]) : values[key];
  }
  if (values.includeSecrets === true) raw.skipSecrets = false;
  const parsed = z.strictObject(syncOptionShape).partial().safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new CliError(EXIT.usage, `--${kebab(String(issue.path[0]))}: ${issue.message}`);
  }
  return parsed.data;
}
