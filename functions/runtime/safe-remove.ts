import { constants } from 'node:fs';
import { open, readdir, rmdir, unlink, type FileHandle } from 'node:fs/promises';

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW } = constants;

/** How many times a directory is listed and emptied before it is left as it is. */
const MAX_PASSES = 5;

/**
 * Removes a directory tree that a job's processes may still be changing, as root, without ever
 * following a link the job planted. `fs.rm` walks by path: between its `lstat` of a directory and
 * its removal of the entries inside, a job could replace that directory with a symbolic link to
 * any path of the host (`y -> /var/lib/svc`), and root then unlinked the files of that name there
 * (a Python thread the job left running did it while the runner removed its job directory). Here
 * each directory is opened with O_NOFOLLOW and its entries are reached through the open descriptor
 * (`/proc/self/fd/N/name`), so a swapped name is a link, removed as a link, and nothing outside the
 * tree is touched. A job that keeps writing into the tree may leave some of it behind: the tree
 * goes with its slot or process directory later. A path that is gone is no error.
 */
export async function removeTree(path: string): Promise<void> {
  await removeEntry(path);
}

async function removeEntry(path: string): Promise<void> {
  let dir: FileHandle;
  try {
    dir = await open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return;
    // A file or a link (O_NOFOLLOW refuses it): the name itself goes, never what a link points to.
    if (code === 'ENOTDIR' || code === 'ELOOP') return ignoreGone(unlink(path));
    throw error;
  }
  try {
    await emptyDirectory(`/proc/self/fd/${dir.fd}`);
  } finally {
    await dir.close();
  }
  try {
    await rmdir(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // Swapped for a link after it was emptied: the link goes; a directory still written to stays.
    if (code === 'ENOTDIR') return ignoreGone(unlink(path));
    if (code !== 'ENOENT' && code !== 'ENOTEMPTY') throw error;
  }
}

/** `base` names an open directory descriptor: every name below it resolves inside that directory. */
async function emptyDirectory(base: string): Promise<void> {
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    const names = await readdir(base);
    if (names.length === 0) return;
    for (const name of names) {
      const entry = `${base}/${name}`;
      try {
        // Most entries are files: one call. unlink never follows the last component.
        await unlink(entry);
        continue;
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') continue;
        if (code !== 'EISDIR' && code !== 'EPERM') throw error;
      }
      await removeEntry(entry);
    }
  }
}

async function ignoreGone(removal: Promise<void>): Promise<void> {
  try {
    await removal;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
