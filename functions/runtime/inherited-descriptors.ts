import { closeSync, readdirSync, readFileSync } from 'node:fs';

/** O_CLOEXEC as /proc/<pid>/fdinfo shows it in `flags` (octal). */
const O_CLOEXEC = 0o2000000;

/**
 * Closes the descriptors this process was started with beyond stdin, stdout and stderr that do
 * not close on exec (a supervisor's pipe, a shell's redirection, a socket passed down). Node hands
 * every such descriptor to every child it spawns, and bwrap into the sandbox: each job could write
 * to, or read from, whatever it leads to. Node's own descriptors all close on exec, and so does
 * the IPC channel a parent may have opened, kept all the same. Where /proc is missing, nothing.
 */
export function closeInheritedDescriptors(): number[] {
  let names: string[];
  try {
    names = readdirSync('/proc/self/fd');
  } catch {
    return [];
  }
  const channel = (process.channel as { fd?: number } | undefined)?.fd;
  const closed: number[] = [];
  for (const name of names) {
    const fd = Number(name);
    if (!Number.isInteger(fd) || fd <= 2 || fd === channel) continue;
    let flags: number;
    try {
      const match = /^flags:\s*([0-7]+)$/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'));
      if (!match) continue;
      flags = parseInt(match[1]!, 8);
    } catch {
      continue; // the listing's own descriptor, closed since
    }
    if (flags & O_CLOEXEC) continue;
    try {
      closeSync(fd);
      closed.push(fd);
    } catch {
      // already gone
    }
  }
  return closed;
}
