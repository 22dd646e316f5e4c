/**
 * The console's one time format: `2026-11-24 15:58:22`, in UTC (what the API returns), so a time
 * reads the same on every page, in the server's markup and in the pages' bundles (browser/run-page.ts
 * writes times the same way).
 */
export function formatTime(iso: string | null | undefined): string {
  return iso ? iso.replace('T', ' ').slice(0, 19) : '';
}
