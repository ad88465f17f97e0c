import { lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, resolve } from 'node:path';

/**
 * The file a SQLite memory path really names: symbolic links followed (also to a target that does not
 * exist yet, which SQLite will create), and its directory resolved. SQLite opens the link's target and
 * puts its `-wal`, `-shm` and `-journal` files beside the *target*: a memory named through a link must be
 * created, and hidden from agents, at the target (SPEC §13). Before, `witness.db -> data/real.db` was
 * hidden at `witness.db` while `data/real.db-wal`, holding every attack's payload, stayed readable.
 */

/** More links than this in a row is a loop (the kernel's own limit is 40). */
const MAX_LINKS = 40;

export function resolveMemoryFile(path: string): string {
  let current = isAbsolute(path) ? path : resolve(path);
  for (let hops = 0; hops < MAX_LINKS; hops++) {
    let isLink: boolean;
    try {
      isLink = lstatSync(current).isSymbolicLink();
    } catch {
      break; // nothing there yet: SQLite creates it at this name
    }
    if (!isLink) break;
    current = resolve(dirname(current), readlinkSync(current));
  }
  try {
    return resolve(realpathSync(dirname(current)), basename(current));
  } catch {
    return current;
  }
}

/** Whether a memory location (`--db`) is a SQLite file rather than `:memory:` or a database URL. */
export function isMemoryFile(location: string): boolean {
  return (
    location !== ':memory:' && !location.startsWith('file:') && !/^[a-z][a-z0-9+.-]*:\/\//i.test(location)
  );
}
