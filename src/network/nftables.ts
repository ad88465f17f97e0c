import { createRequire } from 'node:module';

/**
 * libnftables (Debian's libnftables1, the library behind `nft`), called in process through koffi: the
 * rules of a sandbox's network namespace are written and read without starting a process (a process start
 * costs 50-100 ms on a loaded two-core machine; a ruleset through the library, well under a millisecond
 * once warm). A context talks to the kernel over a netlink socket it opens when it is made, so a context
 * made while the thread is inside a namespace acts on that namespace for its whole life, wherever it is
 * used from.
 */

/** libnftables' NFT_CTX_OUTPUT_JSON. */
const OUTPUT_JSON = 1 << 4;

interface Library {
  ctxNew(flags: number): unknown;
  bufferOutput(ctx: unknown): number;
  bufferError(ctx: unknown): number;
  setOutputFlags(ctx: unknown, flags: number): void;
  run(ctx: unknown, commands: string): number;
  output(ctx: unknown): string | null;
  error(ctx: unknown): string | null;
  free(ctx: unknown): void;
}

let library: Library | undefined;
let loadError: string | undefined;

function load(): Library | undefined {
  if (library !== undefined || loadError !== undefined) return library;
  try {
    const koffi = createRequire(import.meta.url)('koffi') as {
      load(path: string): { func(signature: string): (...args: unknown[]) => unknown };
    };
    const lib = koffi.load('libnftables.so.1');
    const ctxNew = lib.func('void *nft_ctx_new(uint32_t flags)');
    const bufferOutput = lib.func('int nft_ctx_buffer_output(void *ctx)');
    const bufferError = lib.func('int nft_ctx_buffer_error(void *ctx)');
    const setOutputFlags = lib.func('void nft_ctx_output_set_flags(void *ctx, uint32_t flags)');
    const run = lib.func('int nft_run_cmd_from_buffer(void *ctx, const char *buf)');
    const output = lib.func('const char *nft_ctx_get_output_buffer(void *ctx)');
    const error = lib.func('const char *nft_ctx_get_error_buffer(void *ctx)');
    const free = lib.func('void nft_ctx_free(void *ctx)');
    library = {
      ctxNew: (flags) => ctxNew(flags),
      bufferOutput: (ctx) => bufferOutput(ctx) as number,
      bufferError: (ctx) => bufferError(ctx) as number,
      setOutputFlags: (ctx, flags) => void setOutputFlags(ctx, flags),
      run: (ctx, commands) => run(ctx, commands) as number,
      output: (ctx) => output(ctx) as string | null,
      error: (ctx) => error(ctx) as string | null,
      free: (ctx) => void free(ctx),
    };
  } catch (error) {
    loadError = `libnftables could not be loaded (${(error as Error).message}); install Debian's libnftables1 (package nftables)`;
  }
  return library;
}

/** Undefined when libnftables can be used; otherwise why not (naming the package to install). */
export function nftablesUnavailable(): string | undefined {
  if (process.platform !== 'linux') return 'nftables is Linux only';
  load();
  return loadError;
}

/** One libnftables context: bound to the network namespace the thread was in when it was made. */
export interface NftablesContext {
  /** Runs commands (nft's own syntax); throws with nft's message when the kernel or parser refuses. */
  run(commands: string): void;
  /** Runs a listing command and returns its JSON output, parsed. */
  listJson(command: string): unknown;
  close(): void;
}

export function openNftables(): NftablesContext {
  const lib = load();
  // Internal: callers ask nftablesUnavailable() before any attempt and use nftables only where it loaded.
  if (lib === undefined) throw new Error(loadError ?? 'libnftables is unavailable');
  const ctx = lib.ctxNew(0);
  // Internal: only an allocation failure makes the library return no context.
  if (ctx === null) throw new Error('nft_ctx_new failed');
  let open = true;
  // Buffered: the library would otherwise print to Witness's own stdout and stderr.
  lib.bufferOutput(ctx);
  lib.bufferError(ctx);
  const run = (commands: string): string => {
    // Internal: a context is used only while its attempt's sandbox is being set up or torn down.
    if (!open) throw new Error('an nftables context was used after it was closed');
    const status = lib.run(ctx, commands);
    const output = lib.output(ctx) ?? '';
    const error = (lib.error(ctx) ?? '').trim();
    // Internal: the commands are Witness's own; a refusal is the kernel's (no nf_tables, no nat), and it
    // becomes that attempt's error, naming the kernel's message.
    if (status !== 0) throw new Error(`nftables refused the rules: ${error || `status ${status}`}`);
    return output;
  };
  return {
    run(commands) {
      run(commands);
    },
    listJson(command) {
      lib.setOutputFlags(ctx, OUTPUT_JSON);
      try {
        return JSON.parse(run(command)) as unknown;
      } finally {
        lib.setOutputFlags(ctx, 0);
      }
    },
    close() {
      if (!open) return;
      open = false;
      lib.free(ctx);
    },
  };
}
