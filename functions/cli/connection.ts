import { CliError, EXIT } from './errors.js';
import { configDir, Profiles, type Profile } from './profiles.js';
import { Remote } from './remote.js';
import type { Io } from './io.js';

/**
 * Which server, workspace and token a command talks to: `--base-url`, `--workspace-id` and
 * `--token` (or `SVC_TOKEN`) first, then the profile named by `--workspace`, then the active one.
 */

export interface ConnectionFlags {
  workspace?: string;
  baseUrl?: string;
  workspaceId?: string;
  token?: string;
}

export const profilesOf = (io: Pick<Io, 'env'>) => new Profiles(configDir(io.env));

/** The named profile; an unknown name is an error that lists the names there are. */
export function namedProfile(profiles: Profiles, name: string): Profile {
  const found = profiles.get(name);
  if (found) return found;
  throw new CliError(EXIT.usage, `no workspace profile named ${name}; ${knownProfiles(profiles)}`);
}

export function knownProfiles(profiles: Profiles): string {
  const names = profiles.list().profiles.map((p) => p.name);
  return names.length ? `the profiles are: ${names.join(', ')}` : 'there are no profiles yet (svc workspace add <name> <workspace_id> <base_url>)';
}

/**
 * Warns when the token would cross the network in clear: an http:// URL whose host is not this
 * machine's loopback. Anyone on the way (a café's Wi-Fi, a proxy) reads a Bearer token sent so.
 */
export function warnIfPlainHttp(baseUrl: string, io: Pick<Io, 'err'>): void {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return; // Refused where it is used, with the reason.
  }
  if (url.protocol !== 'http:') return;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host.endsWith('.localhost') || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host)) return;
  io.err(`svc: warning: ${url.origin} is plain http: the token crosses the network unencrypted, readable by anyone on the way; use https://`);
}

/**
 * The refusal of a command that lacks part of its connection: what is missing and how to give
 * just that. The token is asked for by SVC_TOKEN, never `--token`, which every user of the machine
 * can read in `ps`.
 */
export function missingConnection(missing: { baseUrl: boolean; workspaceId: boolean; token: boolean }, context = ''): CliError {
  const named = [missing.baseUrl && 'base URL', missing.workspaceId && 'workspace id', missing.token && 'token'].filter(Boolean).join(', ');
  const flags = [missing.baseUrl && '--base-url', missing.workspaceId && '--workspace-id'].filter(Boolean).join(' and ');
  const how = [flags && `pass ${flags}`, missing.token && 'set SVC_TOKEN'].filter(Boolean).join(' and ');
  return new CliError(EXIT.usage, `no ${named}${context}: run svc workspace add, or ${how}`);
}

export function connect(flags: ConnectionFlags, io: Pick<Io, 'env' | 'err'>): Remote {
  const profiles = profilesOf(io);
  const profile = flags.workspace ? namedProfile(profiles, flags.workspace) : profiles.active();
  const baseUrl = flags.baseUrl ?? profile?.baseUrl;
  const workspaceId = flags.workspaceId ?? profile?.workspaceId;
  const token = flags.token ?? io.env.SVC_TOKEN ?? profile?.token;
  if (!baseUrl || !workspaceId || !token) throw missingConnection({ baseUrl: !baseUrl, workspaceId: !workspaceId, token: !token });
  warnIfPlainHttp(baseUrl, io);
  return new Remote({ baseUrl, workspaceId, token });
}
