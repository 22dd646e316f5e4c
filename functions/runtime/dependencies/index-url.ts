/**
 * A package index's URL as messages and logs name it: without the user and password it may carry
 * (`https://user:password@host/simple/` as `https://host/simple/`), which only the installer's own
 * config holds.
 */
export function urlWithoutCredentials(url: string): string {
  try {
    const parsed = new URL(url);
    if (!parsed.username && !parsed.password) return url;
    parsed.username = '';
    parsed.password = '';
    return parsed.toString();
  } catch {
    return url;
  }
}
