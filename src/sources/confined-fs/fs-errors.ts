/**
 * The two kinds of failure confined code tells apart: an errno from the kernel (a gap, a refusal: data)
 * and a cancellation (the caller asked for no further I/O: it must travel up through every catch that
 * turns errno failures into data, never come back as evidence).
 */

/** Thrown by a cancellable seam (cancellable-fs.ts) once its caller's flag is set; never an errno. */
export class OperationCancelled extends Error {
  constructor() {
    super('acquisition cancelled');
    this.name = 'OperationCancelled';
  }
}

/**
 * Lets a cancellation through a catch that turns I/O errors into gaps: an aborted acquisition must reject,
 * never come back as a partial observation that looks like evidence.
 */
export function rethrowCancelled(error: unknown): void {
  if (error instanceof OperationCancelled) throw error;
}

/** The errno code of a Node fs error (or a native call's: errno-name.ts), or 'UNKNOWN'. */
export function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'UNKNOWN';
}
