import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../functions/core/common/errors.js';
import { parseScope, parseScopes, scopesAllow } from '../../../functions/core/identity/scopes.js';

describe('token scopes', () => {
  it('limits actions and paths by glob', () => {
    const scopes = parseScopes(['jobs:run:f/ops/*', 'variables:read']);
    expect(scopesAllow(scopes, 'jobs', 'run', 'f/ops/deploy')).toBe(true);
    expect(scopesAllow(scopes, 'jobs', 'run', 'f/ops/sub/deploy')).toBe(false);
    expect(scopesAllow(scopes, 'jobs', 'run', 'f/billing/x')).toBe(false);
    expect(scopesAllow(scopes, 'variables', 'read', 'u/alice/anything')).toBe(true);
    expect(scopesAllow(scopes, 'variables', 'write', 'u/alice/anything')).toBe(false);
    expect(scopesAllow(scopes, 'scripts', 'read', 'f/ops/deploy')).toBe(false);
  });

  it('lets write include read, and run or cancel include reading those jobs', () => {
    expect(scopesAllow(parseScopes(['scripts:write']), 'scripts', 'read', 'u/a/b')).toBe(true);
    expect(scopesAllow(parseScopes(['jobs:run:u/a/b']), 'jobs', 'read', 'u/a/b')).toBe(true);
    expect(scopesAllow(parseScopes(['jobs:run:u/a/b']), 'jobs', 'cancel', 'u/a/b')).toBe(false);
    expect(scopesAllow(parseScopes(['jobs:read']), 'jobs', 'run', 'u/a/b')).toBe(false);
    expect(scopesAllow(parseScopes(['resources:run']), 'resources', 'read', 'u/a/b')).toBe(false);
  });

  it('supports * for domain and action, and ** across folders', () => {
    expect(scopesAllow(parseScopes(['*:read']), 'resources', 'read', 'u/a/b')).toBe(true);
    expect(scopesAllow(parseScopes(['*:read']), 'resources', 'write', 'u/a/b')).toBe(false);
    expect(scopesAllow(parseScopes(['scripts:*:u/alice/**']), 'scripts', 'write', 'u/alice/deep/er')).toBe(true);
    expect(scopesAllow(parseScopes(['scripts:*:u/alice/**']), 'scripts', 'write', 'u/bob/x')).toBe(false);
  });

  it('never grants what no scope domain names: users and tokens', () => {
    expect(scopesAllow(parseScopes(['*:*']), 'users', 'write', null)).toBe(false);
    expect(scopesAllow(parseScopes(['*:*']), 'tokens', 'write', null)).toBe(false);
  });

  it('refuses malformed scopes with a 400 naming the field', () => {
    for (const bad of ['jobs', 'jobs:', 'jobs:fly', 'planets:read', 'JOBS:read', ':read', 'users:read']) {
      let error: unknown;
      try {
        parseScope(bad);
      } catch (e) {
        error = e;
      }
      expect(error, bad).toBeInstanceOf(ApiError);
      expect((error as ApiError).status).toBe(400);
      expect((error as ApiError).details?.field).toBe('scopes');
    }
  });
});
