import type { SurfaceSource } from '../../src/sources/surface-source.js';

/** Wraps a real source and counts acquisitions, to prove when the file system is (not) read. */
export function countingSource(inner: SurfaceSource): SurfaceSource & { calls: number } {
  const counter = {
    calls: 0,
    identifier: () => inner.identifier(),
    acquire: (
      scorable: Parameters<SurfaceSource['acquire']>[0],
      options?: Parameters<SurfaceSource['acquire']>[1],
    ) => {
      counter.calls++;
      return inner.acquire(scorable, options);
    },
  };
  return counter;
}
