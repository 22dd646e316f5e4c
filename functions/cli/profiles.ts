import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { CliError, EXIT } from './errors.js';

/**
 * Workspace profiles (`svc workspace add|list|switch|remove`): name, workspace id, base URL and
 * token, kept in the user's config directory — `$SVC_CONFIG_DIR`, else `$XDG_CONFIG_HOME/svc`, else
 * `~/.config/svc` — in `workspaces.json`, readable by the user alone (0600, directory 0700).
 */

const profile = z.strictObject({ workspaceId: z.string(), baseUrl: z.string(), token: z.string() });
export type Profile = z.infer<typeof profile> & { name: string };

const profileFile = z.strictObject({ active: z.string().nullable(), workspaces: z.record(z.string(), profile) });
type ProfileFile = z.infer<typeof profileFile>;

export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.SVC_CONFIG_DIR) return env.SVC_CONFIG_DIR;
  if (env.XDG_CONFIG_HOME) return join(env.XDG_CONFIG_HOME, 'svc');
  return join(homedir(), '.config', 'svc');
}

export class Profiles {
  private readonly file: string;

  constructor(private readonly dir: string = configDir()) {
    this.file = join(dir, 'workspaces.json');
  }

  private read(): ProfileFile {
    if (!existsSync(this.file)) return { active: null, workspaces: {} };
    const parsed = profileFile.safeParse(JSON.parse(readFileSync(this.file, 'utf8')));
    if (!parsed.success) throw new CliError(EXIT.usage, `${this.file} is damaged: ${parsed.error.issues[0].message}; remove it and add the workspaces again`);
    return parsed.data;
  }

  /** Written to a temporary file first, so a crash never leaves half a file. */
  private write(data: ProfileFile): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const tmp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(data, null, 2) + '\n', { mode: 0o600 });
    chmodSync(tmp, 0o600);
    renameSync(tmp, this.file);
  }

  list(): { profiles: Profile[]; active: string | null } {
    const data = this.read();
    return { profiles: Object.entries(data.workspaces).map(([name, p]) => ({ name, ...p })), active: data.active };
  }

  get(name: string): Profile | undefined {
    const p = this.read().workspaces[name];
    return p && { name, ...p };
  }

  active(): Profile | undefined {
    const data = this.read();
    return data.active ? this.get(data.active) : undefined;
  }

  /** Adds or replaces a profile and makes it the active one. */
  add(p: Profile): void {
    const data = this.read();
    data.workspaces[p.name] = { workspaceId: p.workspaceId, baseUrl: p.baseUrl, token: p.token };
    data.active = p.name;
    this.write(data);
  }

  switch(name: string): void {
    const data = this.read();
    if (!data.workspaces[name]) throw new CliError(EXIT.usage, `no workspace profile named ${name} (svc workspace list shows them)`);
    data.active = name;
    this.write(data);
  }

  remove(name: string): void {
    const data = this.read();
    if (!data.workspaces[name]) throw new CliError(EXIT.usage, `no workspace profile named ${name}`);
    delete data.workspaces[name];
    if (data.active === name) data.active = Object.keys(data.workspaces)[0] ?? null;
    this.write(data);
  }
}
