import type { ComponentIdentifier } from '../models/identifier.js';
import type { Observation } from '../models/observation.js';
import type { SurfaceScorable } from '../models/scorable.js';

/**
 * The seam between scorers and the world: a source reads evidence for a surface scorable and returns an
 * immutable observation. It knows nothing about conditions, so one observation serves any criterion.
 * Missing or partial evidence is reported in the observation's coverage, never thrown.
 */
export interface SurfaceSource {
  acquire(scorable: SurfaceScorable, options?: AcquireOptions): Promise<Observation>;
  /** Who this source is: type, version and non-secret configuration (root, limits). */
  identifier(): ComponentIdentifier;
}

export interface AcquireOptions {
  /** Aborting rejects the acquisition with the signal's reason once all handles are closed. */
  signal?: AbortSignal | undefined;
}
