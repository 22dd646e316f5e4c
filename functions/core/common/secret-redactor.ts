/**
 * Replaces every occurrence of one secret in a stream of text chunks, also where the secret is cut
 * across two chunks: the end of a chunk that could be the start of the secret is held back until
 * the next chunk (or `flush`) shows whether it is. Text that cannot begin the secret (a line's
 * end, say) is passed on at once.
 */
export interface SecretRedactor {
  push(text: string): string;
  flush(): string;
}

export function secretRedactor(secret: string, replacement: string): SecretRedactor {
  let held = '';
  return {
    push(text) {
      if (!secret) return text;
      const all = (held + text).split(secret).join(replacement);
      let keepFrom = all.length;
      for (let i = Math.max(0, all.length - secret.length + 1); i < all.length; i++) {
        if (all[i] === secret[0] && secret.startsWith(all.slice(i))) {
          keepFrom = i;
          break;
        }
      }
      held = all.slice(keepFrom);
      return all.slice(0, keepFrom);
    },
    flush() {
      const rest = held;
      held = '';
      return rest;
    },
  };
}
