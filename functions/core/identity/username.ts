import { z } from 'zod';

/**
 * A user's name, as POST /api/users/create takes it. Every body that names a user (a member to add
 * or remove, a group member, an invitation) is held to it too: a name no user can have is refused
 * with 400 before it reaches the store, whose keys have hard size limits (DynamoDB: 1,024 bytes
 * for a sort key, which a longer name failed with a 500 on the AWS shell).
 */
export const USERNAME = z.string().regex(/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,49}$/, 'letters, digits, _ . - (at most 50), not starting with . or -');
