import { ApiError } from './errors.js';

/** Fatal: a byte sequence that is not UTF-8 throws instead of becoming U+FFFD. */
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A request body's bytes as text. Bytes that are not UTF-8 (a Latin-1 é, binary data) are a 400:
 * decoded leniently they would be replaced by U+FFFD and stored or run as if the caller had sent
 * that, and the caller would never learn that their data was changed.
 */
export function utf8Text(bytes: ArrayBuffer | Uint8Array, what = 'the request body'): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw new ApiError(400, 'invalid_utf8', `${what} is not valid UTF-8: send text as UTF-8, and binary data as a file in a multipart/form-data body`);
  }
}
