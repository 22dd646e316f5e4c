import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import { toYaml } from '../layout.js';
import { ItemFileError, type Item, type ItemKind, type KindHandler, type RemoteMeta, type SyncContext } from '../items.js';
import type { EffectiveOptions } from '../config.js';
import { takeWindmillFields, type WindmillFileKind } from '../wmill-fields.js';

/**
 * A kind stored as one YAML file per item (resources, variables, resource types, folders, groups,
 * users, settings, the encryption key). Each kind says where its file is, which fields the file
 * has (a strict zod object: an unknown field is an error naming the file), and how to talk to the
 * API; this turns that into a KindHandler.
 */
type P = Record<string, unknown>;

export interface YamlKindSpec {
  kind: ItemKind;
  enabled(options: EffectiveOptions): boolean;
  /** The items of the workspace: id, payload, and (syncBehavior unset) who created it. */
  list(ctx: SyncContext): Promise<{ id: string; payload: P; owner?: string }[]>;
  file(id: string, ctx: SyncContext): string;
  claim(file: string, ctx: SyncContext): string | null;
  /** The file's fields, strict. */
  schema: z.ZodType;
  /** Top-level key order in the file. */
  order: string[];
  toFile(payload: P): Record<string, unknown>;
  fromFile(id: string, data: Record<string, unknown>): P;
  create(payload: P, ctx: SyncContext): Promise<void>;
  update(payload: P, ctx: SyncContext): Promise<void>;
  remove(id: string, ctx: SyncContext): Promise<void>;
}

/** The kinds whose files Windmill's CLI writes with fields of its own (wmill-fields.ts). */
const WINDMILL_FILE_KINDS: Partial<Record<ItemKind, WindmillFileKind>> = { resource: 'resource', variable: 'variable', folder: 'folder', resource_type: 'resource_type', schedule: 'schedule' };

/** Fields a pull writes for information only; never compared, never pushed. */
const OWNERSHIP = ['created_by'];

export function yamlKind(spec: YamlKindSpec): KindHandler {
  const render = (id: string, payload: P, ctx: SyncContext, owner?: string): Item => {
    // syncBehavior v1 strips ownership on pull; without it the creator is written down as before.
    const ownership = ctx.options.syncBehavior === 'v1' || owner === undefined ? {} : { created_by: owner };
    return { kind: spec.kind, id, payload, files: { [spec.file(id, ctx)]: toYaml({ ...spec.toFile(payload), ...ownership }, [...spec.order, ...OWNERSHIP]) } };
  };
  return {
    kind: spec.kind,
    enabled: spec.enabled,
    async fetchRemote(ctx) {
      return (await spec.list(ctx)).map(({ id, payload, owner }) => ({ item: render(id, payload, ctx, owner), meta: {} as RemoteMeta }));
    },
    claim: spec.claim,
    async parse(id, files, ctx) {
      const [file, text] = Object.entries(files)[0];
      const data = parseYamlFile(file, text);
      for (const k of OWNERSHIP) delete data[k];
      const windmillKind = WINDMILL_FILE_KINDS[spec.kind];
      if (windmillKind) takeWindmillFields(windmillKind, file, data, ctx);
      const parsed = spec.schema.safeParse(data);
      if (!parsed.success) throw fileIssue(file, parsed.error);
      const payload = spec.fromFile(id, parsed.data as Record<string, unknown>);
      return { ...render(id, payload, ctx), files };
    },
    async push(item, meta, ctx) {
      await (meta ? spec.update : spec.create)(item.payload, ctx);
    },
    remove: spec.remove,
  };
}

/** The first problem zod found in a file, naming the key: `f/x.resource.yaml: valu: unknown property`. */
export function fileIssue(file: string, error: z.ZodError): ItemFileError {
  const issue = error.issues[0];
  const at = [...issue.path.map(String), ...(issue.code === 'unrecognized_keys' ? [issue.keys.join(', ')] : [])].join('.');
  return new ItemFileError(file, `${at || '(top level)'}: ${issue.code === 'unrecognized_keys' ? 'unknown property' : issue.message}`);
}

export function parseYamlFile(file: string, text: string): Record<string, unknown> {
  let data: unknown;
  try {
    data = parseYaml(text);
  } catch (e) {
    throw new ItemFileError(file, `not valid YAML: ${(e as Error).message.split('\n')[0]}`);
  }
  if (!data || typeof data !== 'object' || Array.isArray(data)) throw new ItemFileError(file, 'expected a YAML mapping');
  return data as Record<string, unknown>;
}
