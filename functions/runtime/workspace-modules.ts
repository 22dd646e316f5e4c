import { chmod, mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { writeCodeFile } from './sandbox-process.js';

/** A file of the layout: `f/<folder>/.../<name>` or `u/<user>/.../<name>`, Python or transpiled TypeScript. */
const LAYOUT_FILE = /^[fu](\/[A-Za-z0-9_.-]+){2,}\.(py|mjs)$/;

/**
 * Writes the workspace scripts a job imports (RunRequest.modules) below its code folder, as the
 * script itself is written: root-owned where the runner runs as root, read-only to the job. The
 * names come off a wire in the AWS shell, so each must be a plain relative path of the layout:
 * nothing climbs out of the folder.
 */
export async function writeWorkspaceModules(codeDir: string, modules: Record<string, string>): Promise<void> {
  const made = new Set<string>();
  for (const [file, source] of Object.entries(modules)) {
    if (!LAYOUT_FILE.test(file) || file.split('/').some((part) => part === '.' || part === '..')) {
      throw new Error(`a workspace import's file name is not one of the job's layout: ${JSON.stringify(file)}`);
    }
    const parts = dirname(file).split('/');
    for (let i = 1; i <= parts.length; i++) {
      const dir = join(codeDir, ...parts.slice(0, i));
      if (made.has(dir)) continue;
      await mkdir(dir, { recursive: true, mode: 0o755 });
      await chmod(dir, 0o755);
      made.add(dir);
    }
    await writeCodeFile(join(codeDir, file), source);
  }
}
