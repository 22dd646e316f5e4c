import { afterAll, beforeAll, expect } from 'vitest';
import { SFNClient } from '@aws-sdk/client-sfn';
import { startServer, type TestServer } from '../http/harness.js';
import { EMULATOR_CREDENTIALS, EMULATOR_REGION } from './emulator-endpoints.js';

/** The AWS shell on this machine and a Step Functions client on its emulator, to read executions. */
export interface FlowRunnerServer {
  s: TestServer;
  sfn: SFNClient;
  stateMachineArn: string;
}

/**
 * Starts the AWS shell (aws-shell-server.ts) with `env` for the test file before its tests and
 * stops it after; `started` receives it once it answers. The flow-runner tests drive flows over
 * the HTTP API and look at the executions as an operator would in the console.
 */
export function useFlowRunnerServer(env: Record<string, string> | undefined, started: (server: FlowRunnerServer) => void): void {
  let server: FlowRunnerServer | undefined;
  let s: TestServer | undefined;
  beforeAll(async () => {
    s = await startServer({ shell: 'aws', ...(env ? { env } : {}) });
    const m = /step functions endpoint (\S+), state machine (\S+)/.exec(s.output());
    if (!m) throw new Error(`the AWS shell did not say where Step Functions is:\n${s.output()}`);
    server = { s, sfn: new SFNClient({ endpoint: m[1], region: EMULATOR_REGION, credentials: EMULATOR_CREDENTIALS }), stateMachineArn: m[2] };
    started(server);
  }, 120_000);
  afterAll(async () => {
    server?.sfn.destroy();
    await s?.stop();
  });
}

/** A TypeScript (bun) step of a flow. */
export const ts = (id: string, content: string, extra: Record<string, unknown> = {}) => ({ id, value: { type: 'rawscript', language: 'bun', content, input_transforms: {} }, ...extra });

/** Creates flow `path` of `modules` in the server's workspace. */
export async function createFlowIn(s: TestServer, path: string, modules: unknown[]): Promise<void> {
  const res = await s.post(`/api/w/${s.workspace}/flows/create`, { path, value: { modules } });
  expect(res.status, await res.clone().text()).toBe(201);
}
