import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { platform } from 'node:os';

/**
 * Marks every descriptor above 2 that this process inherited close-on-exec (SPEC §13), once, when a
 * command that starts agents starts. The attack it stops: a descriptor the process that started Witness
 * left open without close-on-exec (a CI runner's pipe, a socket, a file opened by a wrapper script) was
 * passed on by every `spawn` — bubblewrap keeps what it inherits — and reached every agent, which could
 * read or write whatever it named, outside its sandbox. Descriptors Witness opens itself are
 * close-on-exec already (Node and libuv open them so), and the ones a sandbox must inherit are passed
 * explicitly by `spawn`'s `stdio`, which clears the flag on its copies.
 *
 * close_range(2) with CLOSE_RANGE_CLOEXEC (Linux ≥ 5.11) marks them all in one call; elsewhere each
 * listed in `/proc/self/fd` is marked with fcntl(2). Reached through koffi, as the openat2 seam is.
 * Returns how it was done, or why it could not be (the caller says so once; nothing here throws).
 */

const SYS_CLOSE_RANGE = 436;
const CLOSE_RANGE_CLOEXEC = 1 << 2;
const F_GETFD = 1;
const F_SETFD = 2;
const FD_CLOEXEC = 1;

/**
 * How the descriptors were marked; `elsewhere` off Linux, where no sandbox is offered and every agent runs
 * with `sandbox: none`.
 */
export type DescriptorMarking =
  | { marked: 'close_range' | 'fcntl' | 'elsewhere' }
  | { marked: false; reason: string };

let done: DescriptorMarking | undefined;

export function markInheritedDescriptorsCloseOnExec(): DescriptorMarking {
  done ??= mark();
  return done;
}

type KoffiFunction = (...args: unknown[]) => unknown;
interface Koffi {
  load(path: string | null): { func(signature: string): KoffiFunction };
}

function mark(): DescriptorMarking {
  if (platform() !== 'linux') return { marked: 'elsewhere' };
  let libc: ReturnType<Koffi['load']>;
  try {
    libc = (createRequire(import.meta.url)('koffi') as Koffi).load(null);
  } catch (error) {
    return { marked: false, reason: `koffi could not be loaded (${(error as Error).message})` };
  }
  // Through syscall(2): glibc before 2.34 has no close_range wrapper.
  const closeRange = libc.func('long syscall(long nr, uint32_t first, uint32_t last, uint32_t flags)');
  if (Number(closeRange(SYS_CLOSE_RANGE, 3, 0xffff_ffff, CLOSE_RANGE_CLOEXEC)) === 0) {
    return { marked: 'close_range' };
  }
  const fcntl = libc.func('int fcntl(int fd, int cmd, int arg)');
  let failed = 0;
  let names: string[];
  try {
    names = readdirSync('/proc/self/fd');
  } catch (error) {
    return { marked: false, reason: `/proc/self/fd could not be listed (${(error as Error).message})` };
  }
  for (const name of names) {
    const fd = Number(name);
    if (!Number.isInteger(fd) || fd <= 2) continue;
    const flags = Number(fcntl(fd, F_GETFD, 0));
    // The listing's own descriptor is closed by now (EBADF): nothing to mark.
    if (flags < 0) continue;
    if (Number(fcntl(fd, F_SETFD, flags | FD_CLOEXEC)) < 0) failed++;
  }
  return failed === 0
    ? { marked: 'fcntl' }
    : { marked: false, reason: `${failed} descriptor(s) could not be marked` };
}
