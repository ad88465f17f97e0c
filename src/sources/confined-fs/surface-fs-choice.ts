import { loadOpenat2 } from './openat2.js';
import { openat2SurfaceFs } from './openat2-surface-fs.js';
import { nodeSurfaceFs, type SurfaceFs } from './surface-fs.js';

/**
 * Which implementation of the seam an acquisition uses. `auto` takes openat2 when the kernel and koffi
 * allow it (probed once per thread) and procfs otherwise; `openat2` and `procfs` force one (tests run
 * every confinement suite against both). Both enforce the same rules (SPEC §5.1); openat2 lets the
 * kernel prove placement at open time instead of a `readlink` per file.
 */
export const SURFACE_FS_KINDS = ['auto', 'openat2', 'procfs'] as const;
export type SurfaceFsKind = (typeof SURFACE_FS_KINDS)[number];
export type SurfaceFsImplementation = Exclude<SurfaceFsKind, 'auto'>;

export type SurfaceFsChoice =
  | { ok: true; implementation: SurfaceFsImplementation; fs: SurfaceFs }
  | { ok: false; message: string };

let openat2Seam: SurfaceFs | undefined;

export function chooseSurfaceFs(kind: SurfaceFsKind): SurfaceFsChoice {
  if (kind === 'procfs') return { ok: true, implementation: 'procfs', fs: nodeSurfaceFs };
  const loaded = loadOpenat2();
  if (loaded.available) {
    openat2Seam ??= openat2SurfaceFs(loaded.binding);
    return { ok: true, implementation: 'openat2', fs: openat2Seam };
  }
  if (kind === 'auto') return { ok: true, implementation: 'procfs', fs: nodeSurfaceFs };
  return {
    ok: false,
    message: `surfaceFs 'openat2' was requested but is unavailable: ${loaded.reason}; use surfaceFs 'auto' (falls back to procfs) or 'procfs'`,
  };
}

/** True when openat2 can be used in this thread (tests skip the openat2 variant otherwise, saying why). */
export function openat2Unavailable(): string | undefined {
  const loaded = loadOpenat2();
  return loaded.available ? undefined : loaded.reason;
}
