/**
 * The longest name the service keeps or looks a record up by (an entity's key, a script's path or
 * hash), in UTF-8 bytes. Stores keep such names as keys, and DynamoDB refuses a sort key over
 * 1,024 bytes whatever the characters: 400 characters of Chinese are 1,200 bytes. The names the
 * service makes (paths of at most 255 characters, names, ids, hashes) stay far below it, so a
 * longer name, which a caller may still send (a chat connection a flow names, a variable a route
 * names, a step's script hash), names nothing: the store is not asked, in either shell
 * (CachedStore), and the caller gets the answer it gets for any name that does not exist.
 */
export const MAX_KEY_BYTES = 1000;

const utf8 = new TextEncoder();

export function utf8Length(text: string): number {
  return utf8.encode(text).length;
}

/** Whether `key` is longer than MAX_KEY_BYTES (a UTF-16 unit is 1 to 3 bytes: most keys are decided by their length alone). */
export function keyTooLong(key: string): boolean {
  if (key.length * 3 <= MAX_KEY_BYTES) return false;
  return key.length > MAX_KEY_BYTES || utf8Length(key) > MAX_KEY_BYTES;
}
