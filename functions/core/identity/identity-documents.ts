/**
 * The identity documents the Store keeps: workspace members, groups and folders (whose rights
 * permissions.ts decides), pending invitations and the notification outbox. They live apart from
 * the modules that manage them because documents/entity-values.ts names them to check stored
 * values, and those modules read the store through store/entities.ts, which uses entity-values.ts:
 * both sides import this leaf, which imports nothing.
 */

/** A member's role in a workspace (permissions.ts says what each may do). */
export type Role = 'admin' | 'developer' | 'operator';

/** A user's membership of a workspace (`member`, keyed by username). */
export interface Member {
  username: string;
  role: Role;
  added_by: string;
}

/** A workspace group (`group`); every member is also in the implicit group `all`. */
export interface Group {
  name: string;
  summary: string;
  members: string[];
}

/** A workspace folder (`folder`): its owners and extra_perms give the rights on `f/<name>/...`. */
export interface Folder {
  name: string;
  summary: string;
  owners: string[];
  extra_perms: Record<string, boolean>;
  created_by: string;
}

/** A pending invitation to a workspace (`invite`, identity/invites.ts). */
export interface Invite {
  username: string;
  role: Role;
  invited_by: string;
  invited_at: string;
}

/** A notice to a user, by email or in their outbox (identity/notifications.ts); never holds a secret. */
export interface Notice {
  subject: string;
  text: string;
}

/** A notice kept in the outbox (`notification`) when the instance sends no email. */
export interface OutboxEntry extends Notice {
  id: string;
  created_at: string;
}
