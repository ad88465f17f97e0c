import { arch } from 'node:os';

/**
 * A seccomp filter (classic BPF, as bubblewrap's `--seccomp FD` loads it) that makes the kernel keyring
 * calls — `add_key`, `request_key`, `keyctl` — fail with EPERM, and allows everything else.
 *
 * The attack it stops: every process inherits the session keyring of the one that started it, and a
 * keyring a process possesses lets it read the keys in it whatever its uid. An agent started by Witness
 * (in a container, a CI job, a login session: wherever a session keyring was joined) read the keys of
 * Witness's session — and another attempt's agent could read what this one stored there. Changing the
 * uid does not help (possession is not ownership); denying the calls does.
 *
 * The program checks the architecture of each call first: on x86-64 the i386 and x32 entry points have
 * numbers of their own (an agent could otherwise reach `keyctl` through `int 0x80`), and an architecture
 * the filter does not know is refused outright.
 */

/** struct seccomp_data: `nr` at offset 0, `arch` at offset 4. */
const NR = 0;
const ARCH = 4;

const BPF_LD_W_ABS = 0x20;
const BPF_JEQ_K = 0x15;
const BPF_RET_K = 0x06;
const BPF_AND_K = 0x54;

const RET_ALLOW = 0x7fff_0000;
const RET_ERRNO = 0x0005_0000;
const EPERM = 1;
/** A call from an architecture the filter does not know: the process is killed. */
const RET_KILL_PROCESS = 0x8000_0000;

/** The x32 ABI's marker bit in the syscall number (x86-64 only). */
const X32_SYSCALL_BIT = 0x4000_0000;

interface ArchTable {
  /** AUDIT_ARCH_* of this entry point. */
  audit: number;
  /** add_key, request_key, keyctl. */
  keyring: readonly [number, number, number];
  /** Clear the x32 bit before comparing (x86-64: x32 shares the 64-bit numbers). */
  x32?: boolean;
}

/** The entry points of each host architecture Node.js runs on that the filter knows. */
const TABLES: Readonly<Record<string, readonly ArchTable[]>> = {
  x64: [
    { audit: 0xc000_003e, keyring: [248, 249, 250], x32: true },
    { audit: 0x4000_0003, keyring: [286, 287, 288] },
  ],
  arm64: [
    { audit: 0xc000_00b7, keyring: [217, 218, 219] },
    { audit: 0x4000_0028, keyring: [309, 310, 311] },
  ],
  riscv64: [{ audit: 0xc000_00f3, keyring: [217, 218, 219] }],
};

/** Whether a filter can be built for this host's architecture. */
export function keyringFilterSupported(hostArch: string = arch()): boolean {
  return Object.hasOwn(TABLES, hostArch);
}

/** The compiled filter for the host's architecture (an array of `struct sock_filter`, little-endian). */
export function keyringFilter(hostArch: string = arch()): Buffer {
  const tables = TABLES[hostArch];
  // Internal: sandbox-availability.ts refuses an architecture without a filter before any sandbox starts.
  if (tables === undefined) throw new Error(`no keyring filter is built for the ${hostArch} architecture`);
  const program: Array<[code: number, jt: number, jf: number, k: number]> = [];
  // One block per entry point: [ld arch] jeq audit ? block : next; ld nr; (and ~x32); 3× jeq → deny; allow.
  // Offsets are relative to the next instruction, so each block is laid out with its own length.
  for (const table of tables) {
    const block: Array<[number, number, number, number]> = [[BPF_LD_W_ABS, 0, 0, NR]];
    if (table.x32 === true) block.push([BPF_AND_K, 0, 0, ~X32_SYSCALL_BIT >>> 0]);
    const [addKey, requestKey, keyctl] = table.keyring;
    // Each jeq jumps to the deny at the block's end when equal.
    block.push([BPF_JEQ_K, 3, 0, addKey], [BPF_JEQ_K, 2, 0, requestKey], [BPF_JEQ_K, 1, 0, keyctl]);
    block.push([BPF_RET_K, 0, 0, RET_ALLOW], [BPF_RET_K, 0, 0, RET_ERRNO | EPERM]);
    program.push([BPF_LD_W_ABS, 0, 0, ARCH], [BPF_JEQ_K, 0, block.length, table.audit], ...block);
  }
  program.push([BPF_RET_K, 0, 0, RET_KILL_PROCESS]);
  const out = Buffer.alloc(program.length * 8);
  program.forEach(([code, jt, jf, k], i) => {
    out.writeUInt16LE(code, i * 8);
    out.writeUInt8(jt, i * 8 + 2);
    out.writeUInt8(jf, i * 8 + 3);
    out.writeUInt32LE(k >>> 0, i * 8 + 4);
  });
  return out;
}
