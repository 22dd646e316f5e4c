import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { hashOf } from './layout.js';

/**
 * Third-party files the console's pages load, served from the pinned npm package as it is
 * installed (never a CDN), by a versioned URL cached for a year. Each has its sha256 so a page's
 * CSP can allow exactly that file (a hash source with the script tag's `integrity`).
 */

export interface StaticAsset {
  /** The URL path the page loads it from; the version in it changes with the package's. */
  url: string;
  text: string;
  hash: string;
}

/** Where the file is in node_modules, and under which name the API Lambda's bundle carries it (lib/constructs/api.ts). */
const UPLOT = { module: 'uplot/dist/uPlot.iife.min.js', bundled: 'console-assets/uplot.iife.min.js' };
const UPLOT_CSS = { module: 'uplot/dist/uPlot.min.css', bundled: 'console-assets/uplot.min.css' };

/**
 * The file's text: from the installed package (local service, tests), or beside the bundle on
 * AWS, where the API Lambda is one bundled file and has no node_modules.
 */
function readAsset(file: { module: string; bundled: string }): string {
  try {
    return readFileSync(createRequire(import.meta.url).resolve(file.module), 'utf8');
  } catch {
    const beside = fileURLToPath(new URL(`./${file.bundled}`, import.meta.url));
    if (!existsSync(beside)) throw new Error(`console asset ${file.module} is neither installed nor bundled`);
    return readFileSync(beside, 'utf8');
  }
}

function uplotVersion(): string {
  try {
    return (createRequire(import.meta.url)('uplot/package.json') as { version: string }).version;
  } catch {
    return 'bundled';
  }
}

let uplot: StaticAsset | undefined;
let uplotCss: string | undefined;

/** uPlot's script (the chart of the run list), read once. */
export function uplotScript(): StaticAsset {
  if (!uplot) {
    const text = readAsset(UPLOT);
    uplot = { url: `/console/assets/uplot-${uplotVersion()}-${hashOf(text).slice(0, 8).replace(/[+/]/g, '_')}.js`, text, hash: hashOf(text) };
  }
  return uplot;
}

const bundles = new Map<string, StaticAsset>();

/** The console's bundles bin/build.js writes: the two editors, and the typed scripts of the console's pages. */
export const CONSOLE_BUNDLES = ['script-editor', 'flow-editor', 'runs-page', 'item-page', 'run-page', 'script-editor-page', 'flow-editor-page', 'approvals-inbox', 'approval-page', 'token-page', 'settings-page', 'holdings-page', 'login-page', 'openapi-page'] as const;
export type ConsoleBundle = (typeof CONSOLE_BUNDLES)[number];

/** An editor's bundle. */
export function editorScript(name: 'script-editor' | 'flow-editor' = 'script-editor'): StaticAsset {
  return consoleBundle(name);
}

/**
 * A bundle of the console's browser code (`script-editor`: CodeMirror and the version diff;
 * `flow-editor`: CodeMirror, yaml and the flow graph; `runs-page`: the run list; `item-page`: an item's run form and recent runs; `run-page`: one run; `script-editor-page`: the script editor's page; `flow-editor-page`: the flow editor's page; `approvals-inbox`: the approvals inbox; `approval-page`: a step's approval page; `token-page`: the API tokens page; `settings-page`: the workspace settings page; `holdings-page`: the forms and buttons of the pages for what a workspace holds; `login-page`: the login page; `openapi-page`: the OpenAPI document page), built by
 * bin/build.js into dist/console-assets/: beside the running bundle (dist/svc.js, the API Lambda),
 * or in dist/ when the service runs from its sources (the AWS shell under test). Read once.
 */
export function consoleBundle(name: ConsoleBundle): StaticAsset {
  let bundle = bundles.get(name);
  if (!bundle) {
    const candidates = [`./console-assets/${name}.js`, `../../../dist/console-assets/${name}.js`].map((p) => fileURLToPath(new URL(p, import.meta.url)));
    const file = candidates.find((c) => existsSync(c));
    if (!file) throw new Error(`the ${name} bundle is missing: run npm run build`);
    const text = readFileSync(file, 'utf8');
    bundle = { url: `/console/assets/${name}-${hashOf(text).slice(0, 12).replace(/[+/]/g, '_')}.js`, text, hash: hashOf(text) };
    bundles.set(name, bundle);
  }
  return bundle;
}

/** uPlot's style sheet, which the run list page puts inline under its own hash. */
export function uplotStyle(): string {
  uplotCss ??= readAsset(UPLOT_CSS);
  return uplotCss;
}
