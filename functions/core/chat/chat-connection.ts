import type { ApiError } from '../errors.js';
import { BindingError, interpolate } from '../bindings.js';
import { getResource } from '../resources.js';
import type { Rights } from '../permissions.js';
import type { CoreDeps } from '../deps.js';

/**
 * The fields of a chat connection (`slack` or `teams`) at `path`, read with the identity of
 * whoever acts and with its `$var:` references resolved, so a secret variable stays readable only
 * by those who may read it. A connection of another type is refused with `wrongType`'s error.
 */
export async function readChatConnectionFields(
  deps: Pick<CoreDeps, 'store' | 'cipher'>,
  rights: Rights,
  path: string,
  type: 'slack' | 'teams',
  wrongType: (actualType: string) => ApiError,
): Promise<Record<string, unknown>> {
  const resource = await getResource(deps, rights, path);
  if (resource.resource_type !== type) throw wrongType(resource.resource_type);
  let value: unknown;
  try {
    value = await interpolate(deps, rights, resource.value, 1);
  } catch (e) {
    throw e instanceof BindingError ? e.toApiError() : e;
  }
  return (value ?? {}) as Record<string, unknown>;
}
