import { CliError, EXIT, type ExitCode } from './errors.js';
import type { TokenView, UserView } from '../core/views/identity-views.js';
import { connect, namedProfile, profilesOf, warnIfPlainHttp, type ConnectionFlags } from './connection.js';
import { Remote } from './remote.js';
import type { Io } from './io.js';

/** `svc workspace ...`, `svc token ...` and `svc whoami`: profiles on this machine, tokens and identity on the server. */

export interface JsonFlag {
  jsonOutput?: boolean;
}

const json = (io: Io, value: unknown) => io.out(JSON.stringify(value, null, 2));

export async function workspaceAdd(name: string, workspaceId: string, baseUrl: string, flags: { token?: string; check: boolean } & JsonFlag, io: Io): Promise<ExitCode> {
  const token = flags.token ?? io.env.SVC_TOKEN ?? (await io.ask('token: ', { secret: true }))?.trim();
  if (!token) throw new CliError(EXIT.usage, 'no token: pass it in SVC_TOKEN, answer the prompt, or use --token');
  const url = baseUrl.replace(/\/+$/, '');
  warnIfPlainHttp(url, io);
  // Refuse a profile that cannot work, with the reason (unreachable, token refused, no such workspace).
  if (flags.check) await new Remote({ baseUrl: url, workspaceId, token }).check();
  profilesOf(io).add({ name, workspaceId, baseUrl: url, token });
  if (flags.jsonOutput) json(io, { name, workspaceId, baseUrl: url, active: true });
  else io.out(`added workspace ${name} (${workspaceId} at ${url}); it is now the active one`);
  return EXIT.ok;
}

export function workspaceList(flags: JsonFlag, io: Io): ExitCode {
  const { profiles, active } = profilesOf(io).list();
  // The token stays in the profile file: a listing never shows it.
  if (flags.jsonOutput) {
    json(io, profiles.map((p) => ({ name: p.name, workspaceId: p.workspaceId, baseUrl: p.baseUrl, active: p.name === active })));
    return EXIT.ok;
  }
  if (profiles.length === 0) io.out('no workspaces (svc workspace add <name> <workspace_id> <base_url>)');
  for (const p of profiles) io.out(`${p.name === active ? '*' : ' '} ${p.name}\t${p.workspaceId}\t${p.baseUrl}`);
  return EXIT.ok;
}

export function workspaceSwitch(name: string, flags: JsonFlag, io: Io): ExitCode {
  const profiles = profilesOf(io);
  namedProfile(profiles, name);
  profiles.switch(name);
  if (flags.jsonOutput) json(io, { active: name });
  else io.out(`active workspace: ${name}`);
  return EXIT.ok;
}

export function workspaceRemove(name: string, flags: JsonFlag, io: Io): ExitCode {
  const profiles = profilesOf(io);
  namedProfile(profiles, name);
  profiles.remove(name);
  if (flags.jsonOutput) json(io, { removed: name, active: profiles.list().active });
  else io.out(`removed workspace ${name}`);
  return EXIT.ok;
}

export async function whoami(flags: ConnectionFlags & JsonFlag, io: Io): Promise<ExitCode> {
  const remote = connect(flags, io);
  // The workspace in use is part of the answer: an unknown one is an error, not a line of output.
  await remote.check();
  const user = await remote.get<UserView>('/api/users/whoami');
  if (flags.jsonOutput) json(io, { ...user, workspace: remote.conn.workspaceId, baseUrl: remote.baseUrl });
  else io.out(`${user.username} <${user.email}>${user.is_admin ? ' (instance admin)' : ''} on workspace ${remote.conn.workspaceId} at ${remote.baseUrl}`);
  return EXIT.ok;
}

export async function tokenCreate(flags: ConnectionFlags & JsonFlag & { label: string; expiration?: string; scope?: string[]; onlyWorkspace?: boolean }, io: Io): Promise<ExitCode> {
  const remote = connect(flags, io);
  const body = {
    label: flags.label,
    ...(flags.expiration ? { expiration: flags.expiration } : {}),
    ...(flags.scope?.length ? { scopes: flags.scope } : {}),
    ...(flags.onlyWorkspace ? { workspace_id: remote.conn.workspaceId } : {}),
  };
  const token = String(await remote.post('/api/users/tokens/create', body));
  // The server shows a token once: stdout has it alone, so `$(svc token create ...)` captures it.
  if (flags.jsonOutput) json(io, { token, label: flags.label });
  else {
    io.out(token);
    io.err(`token "${flags.label}" created; it is shown once, keep it`);
  }
  return EXIT.ok;
}

export async function tokenList(flags: ConnectionFlags & JsonFlag, io: Io): Promise<ExitCode> {
  const remote = connect(flags, io);
  const tokens = await remote.get<TokenView[]>('/api/users/tokens/list');
  if (flags.jsonOutput) {
    json(io, tokens);
    return EXIT.ok;
  }
  if (tokens.length === 0) io.out('no tokens (svc token create --label <label>)');
  for (const t of tokens) {
    const scope = t.scopes?.length ? `scopes ${t.scopes.join(',')}` : 'all rights';
    io.out(`${t.token_prefix}\t${t.label}\t${t.expired ? 'expired' : t.expiration ? `expires ${t.expiration}` : 'no expiry'}\t${t.workspace_id ?? 'any workspace'}\t${scope}`);
  }
  return EXIT.ok;
}

export async function tokenDelete(prefix: string, flags: ConnectionFlags & JsonFlag, io: Io): Promise<ExitCode> {
  const remote = connect(flags, io);
  await remote.delete(`/api/users/tokens/delete/${encodeURIComponent(prefix)}`);
  if (flags.jsonOutput) json(io, { deleted: prefix });
  else io.out(`deleted token ${prefix}`);
  return EXIT.ok;
}

