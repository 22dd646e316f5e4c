import type { Credentials, Principal } from '../core/identity/auth.js';
import type { Rights } from '../core/identity/permissions.js';
import type { Workspace } from '../ports.js';

/** What middleware puts on the Hono context for the routes. */
export interface AppEnv {
  Variables: {
    principal: Principal;
    /** What the request authenticated with, for a long stream to check again that it still may (fresh-rights.ts). */
    credentials: Credentials;
    workspace: Workspace;
    /** The caller's rights in `workspace`, loaded once per request. */
    rights: Rights;
  };
}
