import { describe, expect, it } from 'vitest';
import { connect } from '../../../functions/cli/connection.js';

/**
 * A command run without a profile says what is missing and how to give just that: the token by
 * SVC_TOKEN (docs/configuration.md: `--token` is readable by every user of the machine in `ps`),
 * and never asks for a token SVC_TOKEN already gave.
 */
describe('a command without a profile', () => {
  const refusal = (env: Record<string, string>, flags: { baseUrl?: string; workspaceId?: string } = {}) => {
    try {
      connect(flags, { env: { SVC_CONFIG_DIR: '/nonexistent-svc-config', ...env }, err: () => {} });
    } catch (error) {
      return (error as Error).message;
    }
    throw new Error('connected');
  };

  it('asks only for the server and the workspace when SVC_TOKEN holds the token', () => {
    const message = refusal({ SVC_TOKEN: 'svc_x' });
    expect(message).toBe('no base URL, workspace id: run svc workspace add, or pass --base-url and --workspace-id');
  });

  it('asks for the token by SVC_TOKEN, not by a flag other users can read', () => {
    expect(refusal({}, { baseUrl: 'http://127.0.0.1:8000', workspaceId: 'main' })).toBe('no token: run svc workspace add, or set SVC_TOKEN');
    expect(refusal({})).toBe('no base URL, workspace id, token: run svc workspace add, or pass --base-url and --workspace-id and set SVC_TOKEN');
  });
});
