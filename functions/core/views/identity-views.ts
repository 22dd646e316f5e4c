import { z } from 'zod';
import type { Same } from './same.js';
import { userFields } from '../documents/records.js';
import type { TokenView as CoreTokenView } from '../tokens.js';
import type { UserView as CoreUserView } from '../users.js';

/**
 * Users and tokens as the API answers them, for the OpenAPI document and the CLI; the checks
 * below fail `npm run check` when the core's answers and these schemas part.
 */

/** `users/whoami`, `users/list` (each): a user without the password hash. */
export const userSchema = userFields.omit({ password_hash: true });
export type UserView = z.output<typeof userSchema>;

/** `users/tokens/list` (each): never the secret, only its prefix. */
export const tokenSchema = z.object({
  token_prefix: z.string(),
  label: z.string(),
  scopes: z.array(z.string()).nullable(),
  workspace_id: z.string().nullable(),
  expiration: z.string().nullable(),
  created_at: z.string(),
  expired: z.boolean(),
  expires_soon: z.boolean(),
  expiry_badge: z.enum(['expired', 'within_7_days', 'within_30_days']).nullable(),
});
export type TokenView = z.output<typeof tokenSchema>;

const agree: [Same<UserView, CoreUserView>, Same<TokenView, CoreTokenView>] = [true, true];
void agree;
