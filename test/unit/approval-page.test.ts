import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { orderedFieldNames } from '../../functions/http/approval-form.js';
import { renderApprovalPage, type ApprovalPageModel } from '../../functions/http/approval-page.js';
import { renderDescription } from '../../functions/http/render-all.js';

const XSS = '<script>alert(1)</script>';

function model(overrides: Partial<ApprovalPageModel> = {}): ApprovalPageModel {
  return {
    workspace: 'demo',
    flowPath: 'f/ops/deploy',
    flowSummary: 'Deploy to production',
    stepId: 'b',
    stepSummary: 'Ops approval',
    triggeredBy: 'alice@example.com',
    approvalsReceived: 1,
    approvalsRequired: 2,
    description: null,
    formSchema: null,
    defaultArgs: {},
    enums: {},
    hideCancel: false,
    resumeUrl: '/api/w/demo/jobs_u/resume/j1/r1/sig',
    cancelUrl: '/api/w/demo/jobs_u/cancel/j1/r1/sig',
    state: 'waiting',
    viewer: 'bob@example.com',
    blockedReason: null,
    ...overrides,
  };
}

/** The page's bundle tags: [tag, src, integrity]. */
function bundleTags(html: string): RegExpMatchArray[] {
  return [...html.matchAll(/<script src="([^"]+)" integrity="([^"]+)"><\/script>/g)];
}
/** The page's inline scripts. */
function scripts(html: string): string[] {
  return [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]);
}
function csp(html: string): string {
  const match = /<meta http-equiv="Content-Security-Policy" content="([^"]*)">/.exec(html);
  expect(match).not.toBeNull();
  return match![1].replace(/&#39;/g, "'");
}

describe('renderApprovalPage: escaping', () => {
  it('escapes every model string; none appears raw', () => {
    const html = renderApprovalPage(
      model({
        workspace: XSS,
        flowPath: XSS,
        flowSummary: XSS,
        stepId: XSS,
        stepSummary: XSS,
        triggeredBy: XSS,
        viewer: XSS,
        description: XSS,
        formSchema: { properties: { [XSS]: { type: 'string', description: XSS, default: XSS, title: XSS } } },
        defaultArgs: {},
        enums: {},
      }),
    );
    expect(html).not.toContain(XSS);
    expect(html).not.toContain('<script>alert');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(scripts(html)).toHaveLength(0);
    expect(bundleTags(html)).toHaveLength(1);
  });

  it('escapes enum choices, default args and the blocked reason', () => {
    const page = renderApprovalPage(
      model({
        formSchema: { properties: { env: { type: 'string' }, note: { type: 'string' }, data: { type: 'object' } } },
        enums: { env: [XSS, '"><img src=x onerror=alert(1)>'] },
        defaultArgs: { note: '"><svg onload=alert(1)>', data: { k: XSS } },
      }),
    );
    expect(page).not.toContain(XSS);
    expect(page).not.toMatch(/<(img|svg)[^>]*onerror|<svg onload/);
    const blocked = renderApprovalPage(model({ blockedReason: XSS, loginUrl: 'javascript:alert(1)' }));
    expect(blocked).not.toContain(XSS);
    expect(blocked).not.toContain('javascript:');
  });

  it('puts the URLs into the body data attributes, escaped, for the bundle to read', () => {
    const html = renderApprovalPage(model({ resumeUrl: '/r?x="><script>alert(1)</script>', cancelUrl: '/c?"\u2028' }));
    expect(html).not.toContain('<script>alert');
    const body = /<body([^>]*)>/.exec(html)![1];
    expect(body).toContain('data-resume-url="/r?x=&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"');
    expect(body).toContain('data-cancel-url="/c?&quot;\u2028"');
  });
});

describe('renderApprovalPage: content security policy', () => {
  it('allows exactly its bundle (by the hash its tag carries as integrity) and its style, and nothing external', () => {
    const html = renderApprovalPage(model());
    const policy = csp(html);
    const [[, , integrity]] = bundleTags(html);
    const style = /<style>([\s\S]*?)<\/style>/.exec(html)![1];
    const hash = (text: string) => createHash('sha256').update(text).digest('base64');
    expect(policy).toContain("default-src 'none'");
    expect(policy).toMatch(/script-src 'sha256-[^']+'; /);
    expect(policy).toContain(`script-src '${integrity}'`);
    expect(policy).toContain(`style-src 'sha256-${hash(style)}'`);
    expect(policy).toContain("connect-src 'self'");
    expect(policy).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
    expect(html).toContain('<meta name="referrer" content="no-referrer">');
    expect(html).not.toMatch(/<(link|script|img)[^>]+(src|href)="https?:/);
  });

  it('admits an absolute resume URL origin for fetch, and no script at all when nothing can be done', () => {
    expect(csp(renderApprovalPage(model({ resumeUrl: 'https://api.example.com/r/1' })))).toContain("connect-src 'self' https://api.example.com");
    const done = renderApprovalPage(model({ state: 'resumed' }));
    expect(scripts(done)).toHaveLength(0);
    expect(bundleTags(done)).toHaveLength(0);
    expect(csp(done)).toContain("script-src 'none'");
  });
});

describe('renderDescription', () => {
  it('renders markdown through a sanitizer: no scripts, handlers or javascript: links survive', () => {
    const html = renderDescription({
      markdown: '# Title\n\n<script>alert(1)</script><img src=x onerror="alert(2)"><a href="javascript:alert(3)">x</a>\n\n[ok](https://example.com) <b onclick="alert(4)">bold</b>',
    });
    expect(html).toContain('<h1>Title</h1>');
    expect(html).toContain('<b>bold</b>');
    expect(html).toContain('href="https://example.com"');
    expect(html).toContain('rel="noopener noreferrer nofollow"');
    expect(html).not.toMatch(/<script|onerror|onclick|javascript:|alert\(1\)/);
  });

  it('sanitizes html items, removing remote images, frames, styles and event handlers', () => {
    const html = renderDescription({
      render_all: [{ html: '<p style="color:red" onmouseover="x()">hi</p><iframe src="https://evil"></iframe><img src="https://evil/p.png"><svg onload="x()"></svg><style>*{}</style>' }],
    });
    expect(html).toContain('<p>hi</p>');
    expect(html).not.toMatch(/style|onmouseover|iframe|evil|onload|<svg/);
    const images = renderDescription({ html: '<img src="relative.png"><img src="data:image/png;base64,AAAA" alt="ok">' });
    expect(images).toBe('<div class="item"><div class="html"><img src="data:image/png;base64,AAAA" alt="ok" /></div></div>');
  });

  it('shows an html item too long to sanitize quickly as escaped text, and bounds the html of one page', () => {
    // sanitize-html costs ~1.5 us a character: a description of a few MB held the service for seconds per view.
    const long = `<b>bold</b>${'x'.repeat(60_000)}`;
    const one = renderDescription({ html: long });
    expect(one).toContain('<pre class="text">&lt;b&gt;bold&lt;/b&gt;');
    expect(one).not.toContain('<b>bold</b>');
    const item = `<i>item</i>${'y'.repeat(40_000)}`;
    const page = renderDescription({ render_all: [{ html: item }, { html: item }, { html: item }] });
    expect(page.match(/<i>item<\/i>/g)).toHaveLength(2);
    expect(page.match(/&lt;i&gt;item&lt;\/i&gt;/g)).toHaveLength(1);
    expect(renderDescription({ html: '<i>short</i>' })).toBe('<div class="item"><div class="html"><i>short</i></div></div>');
  });

  it('renders strings as text, tables as HTML tables and maps as an SVG with marker links', () => {
    const html = renderDescription({
      render_all: [
        'plain <b>text</b>',
        { 'table-row-object': [{ name: 'web', cpu: 2 }, { name: 'db', mem: '8G' }] },
        { 'table-col': { a: [1, 2], b: ['x'] } },
        { map: { lat: 48.8584, lon: 2.2945, zoom: 15, markers: [{ lat: 48.8606, lon: 2.3376, title: 'Louvre <museum>' }] } },
      ],
    });
    expect(html).toContain('plain &lt;b&gt;text&lt;/b&gt;');
    expect(html).toContain('<th>name</th><th>cpu</th><th>mem</th>');
    expect(html).toContain('<td>db</td><td></td><td>8G</td>');
    expect(html).toContain('<th>a</th><th>b</th>');
    expect(html).toContain('<td>2</td><td></td>');
    expect(html).toContain('<svg class="map"');
    expect(html).toContain('Louvre &lt;museum&gt;');
    expect(html).toContain('48.8606, 2.3376');
    expect(html).toContain('https://www.openstreetmap.org/?mlat=48.8606&amp;mlon=2.3376#map=15/48.8606/2.3376');
  });

  it('places map markers where their coordinates say: centred on the map centre, east right, north up, the short way across the antimeridian', () => {
    const sketch = (map: unknown) => {
      const html = renderDescription({ map });
      const cross = /class="map-center" d="M([\d.]+) [\d.]+v16M[\d.]+ ([\d.]+)h16"/.exec(html)!;
      const dots = [...html.matchAll(/<circle cx="([\d.]+)" cy="([\d.]+)" r="6"><title>([^<]*)<\/title>/g)];
      const centre = { x: Number(cross[1]), y: Number(cross[2]) };
      return { centre, at: Object.fromEntries(dots.map((d) => [d[3], { x: Number(d[1]) - centre.x, y: Number(d[2]) - centre.y }])) };
    };
    // One marker east of Paris only: the centre stays in the middle of the sketch, the marker right of it.
    const east = sketch({ lat: 48.85, lon: 2.35, markers: [{ lat: 48.85, lon: 2.45, title: 'east' }] });
    expect(east.centre).toEqual({ x: 240, y: 120 });
    expect(east.at.east.x).toBeGreaterThan(0);
    expect(east.at.east.y).toBe(0);
    // North is up, south down, west left, and equal distances in degrees of longitude look equal.
    const around = sketch({ lat: 0, lon: 0, markers: [{ lat: 5, lon: 0, title: 'north' }, { lat: -5, lon: 0, title: 'south' }, { lat: 0, lon: -5, title: 'west' }, { lat: 0, lon: 10, title: 'far east' }] });
    expect(around.centre).toEqual({ x: 240, y: 120 });
    expect(around.at.north).toMatchObject({ x: 0 });
    expect(around.at.north.y).toBeLessThan(0);
    expect(around.at.south.y).toBeCloseTo(-around.at.north.y, 0);
    expect(around.at.west).toMatchObject({ y: 0 });
    expect(around.at['far east'].x).toBeCloseTo(-2 * around.at.west.x, 0);
    // Fiji: 2 degrees east across the antimeridian is just right of the centre, not at the far left.
    const fiji = sketch({ lat: -17, lon: 179, markers: [{ lat: -17, lon: -179, title: 'across' }, { lat: -17, lon: 177, title: 'west' }] });
    expect(fiji.at.across.x).toBeGreaterThan(0);
    expect(fiji.at.across.x).toBeCloseTo(-fiji.at.west.x, 0);
  });

  it('shows images as data: URLs only when their base64 is valid', () => {
    const pixel = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mP8/x8AAwMCAO+ip1sAAAAASUVORK5CYII=';
    expect(renderDescription({ png: pixel })).toContain(`src="data:image/png;base64,${pixel}"`);
    const bad = renderDescription({ render_all: [{ jpeg: '"><script>alert(1)</script>' }, { gif: 'abc' }] });
    expect(bad).not.toContain('<img');
    expect(bad).toContain('invalid jpeg image');
    expect(bad).toContain('invalid gif image');
    const svg = renderDescription({ svg: '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>' });
    expect(svg).toMatch(/^<div class="item"><img class="image" alt="svg image" src="data:image\/svg\+xml;base64,[A-Za-z0-9+/=]+"><\/div>$/);
  });

  it('shows unknown items as escaped JSON', () => {
    expect(renderDescription({ render_all: [{ weird: XSS }] })).toContain('&quot;weird&quot;: &quot;&lt;script&gt;');
  });
});

describe('the approval form', () => {
  const schema = {
    properties: {
      comment: { type: 'string', description: 'Why?' },
      env: { type: 'string', enum: ['dev', 'prod'], default: 'dev' },
      replicas: { type: 'integer', default: 1 },
      ratio: { type: 'number' },
      notify: { type: 'boolean', default: true },
      tags: { type: 'array', items: { type: 'string' } },
      regions: { type: 'array', items: { type: 'string', enum: ['eu', 'us'] } },
      extra: { type: 'object' },
      day: { type: 'string', format: 'date' },
      email: { type: 'string', format: 'email' },
    },
    required: ['env', 'replicas'],
    order: ['replicas', 'env', 'missing', 'replicas'],
  };

  it('orders fields by `order`, then the remaining properties', () => {
    expect(orderedFieldNames(schema)).toEqual(['replicas', 'env', 'comment', 'ratio', 'notify', 'tags', 'regions', 'extra', 'day', 'email']);
    const html = renderApprovalPage(model({ formSchema: schema }));
    const fields = [...html.matchAll(/data-field="([^"]+)"/g)].map((m) => m[1]);
    expect(fields).toEqual(orderedFieldNames(schema));
  });

  it('chooses inputs by type, marks required fields and shows descriptions', () => {
    const html = renderApprovalPage(model({ formSchema: schema }));
    expect(html).toMatch(/<input type="number" step="1" [^>]*data-field="replicas" data-kind="integer" required data-required[^>]* value="1">/);
    expect(html).toMatch(/<input type="number" step="any" [^>]*data-field="ratio" data-kind="number"[^>]* value="">/);
    expect(html).toMatch(/<select [^>]*data-field="env" data-kind="select" required[^>]*><option value="dev" selected>dev<\/option><option value="prod">prod<\/option><\/select>/);
    expect(html).toMatch(/<input type="checkbox" [^>]*data-field="notify" data-kind="boolean"[^>]* checked>/);
    expect(html).toMatch(/<textarea [^>]*data-field="tags" data-kind="list"/);
    expect(html).toMatch(/<select multiple [^>]*data-field="regions" data-kind="multiselect"/);
    expect(html).toMatch(/<textarea [^>]*data-field="extra" data-kind="json"/);
    expect(html).toMatch(/<input type="date" [^>]*data-field="day"/);
    expect(html).toMatch(/<input type="email" [^>]*data-field="email"/);
    expect(html).toContain('Why?');
    expect(html.match(/class="required"/g)).toHaveLength(2);
  });

  it('lets default_args override schema defaults and runtime enums override schema enums', () => {
    const html = renderApprovalPage(
      model({ formSchema: schema, defaultArgs: { replicas: 5, env: 'staging', notify: false, tags: ['a', 'b'], regions: ['ap'], extra: { k: 1 } }, enums: { env: ['staging', 'prod'], regions: ['ap', 'sa'] } }),
    );
    expect(html).toMatch(/data-field="replicas"[^>]* value="5">/);
    expect(html).toContain('<option value="staging" selected>staging</option><option value="prod">prod</option></select>');
    expect(html).not.toContain('value="dev"');
    expect(html).toMatch(/<input type="checkbox" [^>]*data-field="notify" data-kind="boolean"[^>]*>/);
    expect(html).not.toMatch(/data-field="notify"[^>]* checked/);
    expect(html).toMatch(/data-field="tags"[^>]*>a\nb<\/textarea>/);
    expect(html).toContain('<option value="ap" selected>ap</option><option value="sa">sa</option>');
    expect(html).toContain('{\n  &quot;k&quot;: 1\n}</textarea>');
  });
});

describe('renderApprovalPage: buttons and states', () => {
  it('shows Approve and Cancel while waiting', () => {
    const html = renderApprovalPage(model());
    expect(html).toContain('id="approve"');
    expect(html).toContain('id="cancel"');
    expect(html).toContain('<span id="approvals-received">1</span> of <span id="approvals-required">2</span>');
    expect(html).toContain('signed in as bob@example.com');
  });

  it('hides Cancel when hide_cancel is set or there is no cancel URL', () => {
    for (const page of [renderApprovalPage(model({ hideCancel: true })), renderApprovalPage(model({ cancelUrl: null }))]) {
      expect(page).toContain('id="approve"');
      expect(page).not.toContain('id="cancel"');
      expect(page).not.toContain('data-cancel-url');
    }
  });

  it('hides every button and the form when blocked, showing the reason and a login link', () => {
    const html = renderApprovalPage(model({ viewer: null, blockedReason: 'log in to approve', loginUrl: '/user/login?rd=%2Fapprove%2Fx' }));
    expect(html).not.toMatch(/<button|<form|id="approve"|id="cancel"/);
    expect(html).toContain('<p class="blocked" id="blocked" role="alert">log in to approve</p>');
    expect(html).toContain('<a id="login" href="/user/login?rd=%2Fapprove%2Fx">Log in</a>');
    expect(html).toContain('not signed in');
    expect(scripts(html)).toHaveLength(0);
  });

  it.each([
    ['resumed', 'approved and the flow has resumed'],
    ['canceled', 'was canceled'],
    ['timed_out', 'timed out'],
    ['finished', 'already finished'],
  ] as const)('says so and offers no buttons when %s', (state, text) => {
    const html = renderApprovalPage(model({ state, formSchema: { properties: { a: { type: 'string' } } } }));
    expect(html).toContain(text);
    expect(html).not.toMatch(/<button|<form|<input/);
  });

  it('lets a signed-in viewer switch account, coming back to the page', () => {
    const page = renderApprovalPage(model({ viewer: 'ann', switchAccountUrl: '/login?next=%2Fapprove%2Fdemo%2Fj1%2F1%2Fsig' }));
    expect(page).toContain('<dd id="viewer">signed in as ann <a id="switch-account" href="/login?next=%2Fapprove%2Fdemo%2Fj1%2F1%2Fsig">Switch account</a></dd>');
    expect(renderApprovalPage(model({ viewer: null, switchAccountUrl: '/login' }))).toContain('<dd id="viewer">not signed in</dd>');
  });

  it('renders the description inside the page', () => {
    const html = renderApprovalPage(model({ description: { render_all: [{ markdown: '## Changes' }] } }));
    expect(html).toContain('<h2>Changes</h2>');
  });
});
