import { html, type Markup } from '../html.js';

/**
 * Every URL form of spec 4.1 for one script or flow — async, sync and stream, for the latest
 * version by path (`p/` or `f/`) and for one version only (`h/<hash>` or `fv/<version>`) — each
 * with a copy-as-curl whose token is the placeholder `$SVC_TOKEN`, never a real one. The item page
 * and both editors show the same block; the page's bundle wires its `button.copy`
 * (browser/copy-buttons.ts).
 */
export function webhookSection(origin: string, ws: string, kind: 'script' | 'flow', path: string, pinnedId: string | null): Markup {
  const base = `${origin}/api/w/${ws}/jobs`;
  const latest = kind === 'flow' ? `f/${path}` : `p/${path}`;
  const pinned = pinnedId ? (kind === 'flow' ? `fv/${pinnedId}` : `h/${pinnedId}`) : null;
  const forms = (target: string, which: string): [string, string][] => [
    [`async, ${which} (returns the job id)`, `${base}/run/${target}`],
    [`sync, ${which} (waits for the result)`, `${base}/run_wait_result/${target}`],
    [`stream, ${which} (SSE)`, `${base}/run_and_stream/${target}`],
  ];
  const urls: [string, string][] = [...forms(latest, 'latest version'), ...(pinned ? forms(pinned, `this version only (${kind === 'flow' ? `version ${pinnedId}` : pinnedId})`) : [])];
  const curl = (url: string) => `curl -X POST '${url}' \\\n  -H 'Authorization: Bearer $SVC_TOKEN' \\\n  -H 'Content-Type: application/json' \\\n  -d '{}'`;
  return html`<h2 id="webhooks">Webhooks</h2><p class="muted">Replace <code>$SVC_TOKEN</code> with a token from <a href="/tokens">your tokens</a>.</p>
${urls.map(([label, url]) => html`<h3>${label}</h3><pre class="curl">${curl(url)}</pre><button type="button" class="copy">Copy as curl</button>`)}`;
}
