import { describe, expect, it } from 'vitest';
import { connect } from '../../../functions/cli/connection.js';

/**
 * Attack: someone on the network between the CLI and a server reached by http:// (a café's Wi-Fi,
 * a proxy) reads the Bearer token every request carries. The CLI says so before it sends it.
 */
describe('a base URL over plain http', () => {
  const warnings = (baseUrl: string) => {
    const err: string[] = [];
    connect({ baseUrl, workspaceId: 'main', token: 't' }, { env: { SVC_CONFIG_DIR: '/nonexistent-svc-config' }, err: (t) => err.push(t) });
    return err;
  };

  it('is warned about when the server is another machine', () => {
    for (const url of ['http://svc.example.com', 'http://192.0.2.10:8000/', 'http://[2001:db8::1]:8000']) {
      expect(warnings(url), url).toEqual([expect.stringContaining('is plain http: the token crosses the network unencrypted')]);
    }
  });

  it('is not, for https or the loopback of this machine', () => {
    for (const url of ['https://svc.example.com', 'http://127.0.0.1:8000', 'http://localhost:8000', 'http://[::1]:8000', 'http://app.localhost']) {
      expect(warnings(url), url).toEqual([]);
    }
  });
});
