import { ApiError } from '../common/errors.js';
import { parseScopes } from '../identity/scopes.js';
import { Rights } from '../identity/permissions.js';
import type { CoreDeps } from '../deps.js';

/**
 * The identity a trigger (a route without a caller's token, a schedule) runs with: the user who
 * last saved it, narrowed as the token they saved it with was. Whatever they could not do when
 * saving, the trigger cannot do either.
 */
export interface Author {
  permissioned_as: string;
  permissioned_scopes: string[] | null;
}

export function authorOf(rights: Rights): Author {
  return { permissioned_as: rights.principal.username, permissioned_scopes: rights.principal.scopes?.map((s) => s.text) ?? null };
}

export async function authorRights(deps: Pick<CoreDeps, 'store'>, workspaceId: string, author: Author, what: string): Promise<Rights> {
  const user = await deps.store.getUser(author.permissioned_as);
  if (!user) throw new ApiError(503, 'misconfigured', `the author of ${what}, ${author.permissioned_as}, no longer exists; save it again`);
  return Rights.ofUser(deps, user, workspaceId, author.permissioned_scopes ? parseScopes(author.permissioned_scopes) : null);
}
