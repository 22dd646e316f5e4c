/** Spec 5.1: the header is preferred; `?token=` is the alternative for clients that cannot set one. */
export function bearerToken(header: string | undefined, query: string | undefined): string | null {
  const match = header?.match(/^Bearer\s+(\S+)\s*$/i);
  return match?.[1] ?? query ?? null;
}
