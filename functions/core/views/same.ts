/**
 * `true` when A and B are the same type, `never` otherwise: the views assign `true` to a tuple of
 * these, so `npm run check` fails when a schema the API document describes an answer by and the
 * type the core answers with part.
 */
export type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;

/** `true` when every A is a B (for answers whose schema keeps unknown fields, e.g. chat connections). */
export type Assignable<A, B> = [A] extends [B] ? true : never;
