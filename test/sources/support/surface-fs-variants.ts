import { describe } from 'node:test';
import { loadOpenat2 } from '../../../src/sources/confined-fs/openat2.js';
import { openat2SurfaceFs } from '../../../src/sources/confined-fs/openat2-surface-fs.js';
import { nodeSurfaceFs, type SurfaceFs } from '../../../src/sources/confined-fs/surface-fs.js';
import type { SurfaceFsImplementation } from '../../../src/sources/confined-fs/surface-fs-choice.js';

/**
 * Both implementations of the seam, for suites that must hold for each (conformance, the adversarial
 * corpus, the swap race, the fuzzers). Where openat2 cannot be used (old kernel, koffi missing) its
 * variant is skipped with the reason, and the procfs variant still runs: that is the fallback.
 */
export interface SurfaceFsVariant {
  name: SurfaceFsImplementation;
  /** The seam to pass to acquireDirect / recordingFs. */
  fs: SurfaceFs;
  /** Why this variant cannot run here, or false. */
  skip: string | false;
}

const openat2 = loadOpenat2();

export const SURFACE_FS_VARIANTS: readonly SurfaceFsVariant[] = [
  { name: 'procfs', fs: nodeSurfaceFs, skip: false },
  openat2.available
    ? { name: 'openat2', fs: openat2SurfaceFs(openat2.binding), skip: false }
    : { name: 'openat2', fs: nodeSurfaceFs, skip: `openat2 unavailable: ${openat2.reason}` },
];

/** `describe(title [variant], …)` once per implementation. */
export function describeEachSurfaceFs(title: string, body: (variant: SurfaceFsVariant) => void): void {
  for (const variant of SURFACE_FS_VARIANTS) {
    describe(`${title} [${variant.name}]`, { skip: variant.skip }, () => body(variant));
  }
}
