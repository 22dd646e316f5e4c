import { z } from 'zod';
import { assertItemPath } from '../common/paths.js';
import { workspaceAnnouncer } from '../events/announce.js';
import { createEntity, deleteEntity, listEntityValues, requireEntity, updateEntity } from '../store/entities.js';
import { parseBody } from '../common/validation.js';
import { withoutWindmillDefaults } from '../common/windmill-only-fields.js';
import { badRequest } from '../common/errors.js';
import { MAX_VALUE_BYTES } from './resources.js';
import { openFromSync, sealForSync } from './sync-key.js';
import type { Rights } from '../identity/permissions.js';
import type { CoreDeps } from '../deps.js';
import type { Entity, SecretCipher } from '../../ports.js';
import type { Variable } from './workspace-documents.js';

/**
 * Variables, plain or secret (spec 1.3, 2.1, 4.6). A secret's value is stored only encrypted, bound
 * to its workspace and path; it is decrypted for `get` and for jobs that may read it, and never
 * appears in listings or errors.
 */

const value = z.string().refine((v) => Buffer.byteLength(v) <= MAX_VALUE_BYTES, `at most ${MAX_VALUE_BYTES} bytes`);

export const createBody = z.strictObject({
  path: z.string(),
  value,
  is_secret: z.boolean().default(false),
  description: z.string().max(10_000).default(''),
  /** `value` is sealed with the workspace sync key (a CLI pull of a secret); it is decrypted first. */
  encrypted: z.boolean().default(false),
});

export const updateBody = z.strictObject({
  /** Windmill's clients send it (a rename there): svc takes it when it is the path updated. */
  path: z.string().optional(),
  value: value.optional(),
  is_secret: z.boolean().optional(),
  description: z.string().max(10_000).optional(),
  encrypted: z.boolean().default(false),
});

const what = (path: string) => `variable ${path}`;
const context = (workspaceId: string, path: string) => ({ workspace: workspaceId, variable: path });

async function seal(cipher: SecretCipher, workspaceId: string, path: string, plain: string, secret: boolean): Promise<string> {
  if (!secret) return plain;
  // Stored as UTF-8, a lone surrogate (`"\ud800"` in JSON) would come back as U+FFFD: the cipher refuses it.
  if (/\p{Cs}/u.test(plain)) throw badRequest('invalid_request', 'value: a secret must be well-formed Unicode text (no lone surrogate such as \\ud800)', { field: 'value' });
  return cipher.encrypt(plain, context(workspaceId, path));
}

async function open(cipher: SecretCipher, workspaceId: string, v: Variable): Promise<string> {
  return v.is_secret ? cipher.decrypt(v.value, context(workspaceId, v.path)) : v.value;
}

export type VariableView = Omit<Variable, 'value'> & { value?: string; created_at: string; updated_at: string };

function view(e: Entity<Variable>, plain: string | undefined): VariableView {
  const { value: _stored, ...rest } = e.value;
  return { ...rest, ...(plain === undefined ? {} : { value: plain }), created_at: e.created_at, updated_at: e.updated_at };
}

export async function createVariable(deps: Pick<CoreDeps, 'store' | 'clock' | 'cipher' | 'config'>, rights: Rights, body: unknown): Promise<VariableView> {
  const input = parseBody(createBody, withoutWindmillDefaults('variable', body));
  assertItemPath(input.path);
  rights.check('variables', 'write', input.path);
  const plain = input.encrypted ? await openFromSync(deps, rights.workspaceId, input.path, input.value) : input.value;
  const variable: Variable = {
    path: input.path,
    value: await seal(deps.cipher, rights.workspaceId, input.path, plain, input.is_secret),
    is_secret: input.is_secret,
    description: input.description,
    created_by: rights.principal.username,
  };
  const announce = await workspaceAnnouncer(deps, rights.workspaceId, rights.principal.username);
  // Never the value, secret or not: the event names the variable and whether it is secret.
  const e = await createEntity(deps.store, deps.clock, 'variable', rights.workspaceId, input.path, variable, what(input.path), (d) => announce('CreateVariable', { kind: 'variable', path: d.key, version: d.version, extra: { is_secret: d.value.is_secret } }));
  return view(e, undefined);
}

export async function updateVariable(deps: Pick<CoreDeps, 'store' | 'clock' | 'cipher' | 'config'>, rights: Rights, path: string, body: unknown): Promise<VariableView> {
  rights.check('variables', 'write', path);
  const input = parseBody(updateBody, withoutWindmillDefaults('variable', body));
  if (input.path !== undefined && input.path !== path) throw badRequest('invalid_request', `path: a variable cannot be moved by an update`, { field: 'path' });
  const announce = await workspaceAnnouncer(deps, rights.workspaceId, rights.principal.username);
  const e = await updateEntity(deps.store, deps.clock, 'variable', rights.workspaceId, path, what(path), async (v) => {
    const secret = input.is_secret ?? v.is_secret;
    const given = input.value !== undefined && input.encrypted ? await openFromSync(deps, rights.workspaceId, path, input.value) : input.value;
    const plain = given ?? (await open(deps.cipher, rights.workspaceId, v));
    return { ...v, is_secret: secret, value: await seal(deps.cipher, rights.workspaceId, path, plain, secret), description: input.description ?? v.description };
  }, (d) => announce('UpdateVariable', { kind: 'variable', path: d.key, version: d.version, extra: { is_secret: d.value.is_secret } }));
  return view(e, undefined);
}

export async function deleteVariable(deps: Pick<CoreDeps, 'store' | 'clock' | 'config'>, rights: Rights, path: string): Promise<void> {
  rights.check('variables', 'write', path);
  const announce = await workspaceAnnouncer(deps, rights.workspaceId, rights.principal.username);
  await deleteEntity(deps.store, 'variable', rights.workspaceId, path, what(path), announce('DeleteVariable', { kind: 'variable', path }));
}

/** Spec 4.6: an object whose `value` is the variable's (decrypted) value. */
export async function getVariable(deps: Pick<CoreDeps, 'store' | 'cipher'>, rights: Rights, path: string): Promise<VariableView & { value: string }> {
  rights.check('variables', 'read', path);
  const e = await requireEntity(deps.store, 'variable', rights.workspaceId, path, what(path));
  return { ...view(e, undefined), value: await open(deps.cipher, rights.workspaceId, e.value) };
}

/** The same, with the value sealed by the workspace sync key: what a CLI pull writes for a secret. */
export async function getVariableSealed(deps: Pick<CoreDeps, 'store' | 'clock' | 'cipher'>, rights: Rights, path: string): Promise<VariableView & { value: string }> {
  const variable = await getVariable(deps, rights, path);
  return { ...variable, value: await sealForSync(deps, rights.workspaceId, path, variable.value) };
}

/** Plain values are listed; secret ones never are. */
export async function listVariables(deps: Pick<CoreDeps, 'store'>, rights: Rights): Promise<VariableView[]> {
  rights.check('variables', 'read');
  return (await listEntityValues(deps.store, 'variable', rights.workspaceId))
    .filter((e) => rights.can('variables', 'read', e.key))
    .map((e) => view(e, e.value.is_secret ? undefined : e.value.value));
}
