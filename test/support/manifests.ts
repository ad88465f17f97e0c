import { checkManifest, type Manifest } from '../../src/models/manifest.js';
import { uniqueReasons } from '../../src/models/observation.js';
import type { Surface } from '../../src/models/vocabulary.js';
import { nodeSurfaceFs, type SurfaceFs } from '../../src/sources/confined-fs/surface-fs.js';
import { acquireSync } from '../../src/sources/local-file/acquire-sync.js';
import { DEFAULT_LIMITS, type SourceLimits } from '../../src/sources/local-file/limits.js';

/**
 * Takes a real manifest of `root` in-process (as the worker would), through an optional seam that can
 * inject failures, and returns the validated record. `takenAt` is fixed so records compare whole.
 */
export function takeManifest(
  root: string,
  options: { limits?: Partial<SourceLimits>; fs?: SurfaceFs; surface?: Surface } = {},
): Manifest {
  const outcome = acquireSync(
    { root, uri: '/**', match: 'glob', limits: { ...DEFAULT_LIMITS, ...options.limits }, mode: 'manifest' },
    options.fs ?? nodeSurfaceFs,
    () => false,
  );
  if (outcome.kind !== 'done') throw new Error('cancelled');
  const { result } = outcome;
  return checkManifest({
    schemaVersion: 1,
    surface: options.surface ?? 'workspace',
    sourceIdentifier: { type: 'test', version: '1', params: { root } },
    acquisition: result.acquisition,
    takenAt: '2026-01-01T00:00:00.000Z',
    entries: result.manifest ?? [],
    coverage: {
      complete: result.acquisition === 'complete',
      reasons: uniqueReasons(result.gaps),
      gaps: result.gaps,
    },
    metadata: {},
  });
}
