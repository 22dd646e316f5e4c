import type { Principal } from '../core/auth.js';
import type { Workspace } from '../ports.js';

/** What middleware puts on the Hono context for the routes. */
export interface AppEnv {
  Variables: {
    principal: Principal;
    workspace: Workspace;
  };
}
