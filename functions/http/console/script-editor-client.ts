import type { Language } from '../../ports.js';

/** What a new script starts from, per language: a `main` with one input, so the form shows one field. */
export const TEMPLATES: Record<Language, string> = {
  python3: 'def main(name: str = "world"):\n    print(f"hello {name}")\n    return {"greeting": f"hello {name}"}\n',
  bun: 'export async function main(name: string = "world") {\n  console.log(`hello ${name}`);\n  return { greeting: `hello ${name}` };\n}\n',
  nativets: 'export async function main(name: string = "world") {\n  console.log(`hello ${name}`);\n  return { greeting: `hello ${name}` };\n}\n',
  deno: 'export async function main(name: string = "world") {\n  console.log(`hello ${name}`);\n  return { greeting: `hello ${name}` };\n}\n',
  bash: 'name="${1:-world}"\necho "hello $name"\n',
  go: 'package inner\n\nimport "fmt"\n\nfunc main(name string) (interface{}, error) {\n\tfmt.Println("hello", name)\n\treturn map[string]string{"greeting": "hello " + name}, nil\n}\n',
};

/** The editor page's own style (allowed by its hash like the console's); CodeMirror's theme comes with its nonce. */
export const EDITOR_STYLE = [
  '.editor-grid{display:grid;grid-template-columns:minmax(0,1fr);gap:1rem}',
  '@media (min-width:64rem){.editor-grid{grid-template-columns:minmax(0,3fr) minmax(0,2fr)}}',
  '.editor-meta{display:grid;grid-template-columns:repeat(auto-fill,minmax(11rem,1fr));gap:.5rem;margin-bottom:.5rem}',
  '.code-editor .cm-editor{border:1px solid #888;min-height:16rem;max-height:70vh;font-size:.9rem}.code-editor .cm-scroller{font-family:ui-monospace,monospace}',
  '.code-editor .cm-editor.cm-focused{outline:3px solid #f9ab00;outline-offset:1px}',
  '#code-text{min-height:16rem}',
  'table.diff{font-family:ui-monospace,monospace;font-size:.85em}table.diff td{border:0;padding:0 .4rem;white-space:pre-wrap;word-break:break-word}',
  'table.diff td.no{color:var(--muted);text-align:right;width:3ch}table.diff td.sign{width:1ch}table.diff caption{text-align:left;font-family:system-ui,sans-serif;padding:.3rem 0}',
  'table.diff tr.add{background:#e6ffec}table.diff tr.del{background:#ffebe9}table.diff tr.skip td{color:var(--muted);font-style:italic}',
].join('');
