/**
 * What the console calls a language: the stored names are the modelled service's (`nativets`,
 * `python3`, ...), which mean nothing to a reader; a flow job's `language` is a placeholder.
 */
const NAMES: Record<string, string> = {
  nativets: 'TypeScript',
  bun: 'TypeScript (Bun)',
  deno: 'TypeScript (Deno)',
  python3: 'Python',
  bash: 'Bash',
  go: 'Go',
};

export function languageName(language: string | null | undefined): string {
  if (!language) return '';
  return NAMES[language] ?? language;
}
