import { z } from 'zod';
import { ComponentIdentifierSchema } from './identifier.js';
import { AcquisitionStatusSchema, SurfaceCoverageSchema } from './observation.js';
import { JsonObjectSchema, parseRecord, TimestampSchema } from './record.js';
import { UriSchema } from './scorable.js';
import { MANIFEST_ENTRY_TYPES, SURFACES } from './vocabulary.js';

/**
 * A manifest lists every entry of a surface (the attempt's workspace or its home) at one moment (SPEC
 * §12): per entry its uri, type, size, sha256 (complete reads of regular files only), permission bits and
 * link target. Two manifests — one after planting, one after the agent ended — give the change set.
 *
 * It is taken through the same confined, bounded walk as an observation and carries the same coverage
 * vocabulary: an entry that could not be listed or read is a gap, never a silent omission, so a change
 * set built from it can say what it does not know.
 */

export const SurfaceKindSchema = z.enum(SURFACES);
export const ManifestEntryTypeSchema = z.enum(MANIFEST_ENTRY_TYPES);

const Sha256Schema = z.string().regex(/^[0-9a-f]{64}$/, 'sha256 must be 64 lowercase hex digits');

export const ManifestEntrySchema = z
  .strictObject({
    uri: UriSchema,
    type: ManifestEntryTypeSchema,
    /** lstat size for directories, symlinks and others; for a file, the bytes of the handle read. */
    sizeBytes: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
    /** Present only for a regular file read in full. */
    sha256: Sha256Schema.nullable(),
    /** Permission bits (`mode & 0o7777`): setuid, setgid, sticky and rwx for owner, group, others. */
    mode: z.number().int().min(0).max(0o7777),
    /** A symlink's target as stored in the link (never followed); null for every other type. */
    linkTarget: z.string().nullable(),
  })
  .superRefine((entry, ctx) => {
    if (entry.type !== 'file' && entry.sha256 !== null) {
      ctx.addIssue({ code: 'custom', path: ['sha256'], message: 'only a file has a digest' });
    }
    if (entry.type !== 'symlink' && entry.linkTarget !== null) {
      ctx.addIssue({ code: 'custom', path: ['linkTarget'], message: 'only a symlink has a link target' });
    }
  });
export type ManifestEntry = z.infer<typeof ManifestEntrySchema>;

export const ManifestSchema = z
  .strictObject({
    schemaVersion: z.literal(1),
    surface: SurfaceKindSchema,
    sourceIdentifier: ComponentIdentifierSchema,
    acquisition: AcquisitionStatusSchema,
    takenAt: TimestampSchema,
    entries: z.array(ManifestEntrySchema),
    coverage: SurfaceCoverageSchema,
    metadata: JsonObjectSchema,
  })
  .superRefine((manifest, ctx) => {
    for (let i = 1; i < manifest.entries.length; i++) {
      const previous = (manifest.entries[i - 1] as ManifestEntry).uri;
      const current = (manifest.entries[i] as ManifestEntry).uri;
      if (previous >= current) {
        ctx.addIssue({
          code: 'custom',
          path: ['entries', i, 'uri'],
          message: previous === current ? `duplicate entry uri ${current}` : 'entries must be sorted by uri',
        });
      }
    }
    if ((manifest.acquisition === 'complete') !== manifest.coverage.complete) {
      ctx.addIssue({
        code: 'custom',
        path: ['acquisition'],
        message: 'acquisition is complete exactly when coverage.complete is true',
      });
    }
    if (
      (manifest.acquisition === 'unavailable' || manifest.acquisition === 'error') &&
      manifest.entries.length > 0
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['entries'],
        message: `an ${manifest.acquisition} manifest carries no entries`,
      });
    }
    if (manifest.acquisition === 'partial' && manifest.coverage.gaps.length === 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['coverage', 'gaps'],
        message: 'a partial manifest names its gaps',
      });
    }
  });
export type Manifest = z.infer<typeof ManifestSchema>;

/** Validates a manifest (from a source, a file or a database) and deep-freezes it: it is evidence. */
export function checkManifest(value: unknown): Manifest {
  const manifest = parseRecord(ManifestSchema, value, 'manifest');
  deepFreeze(manifest);
  return manifest;
}

function deepFreeze(value: unknown): void {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return;
  for (const child of Object.values(value)) deepFreeze(child);
  Object.freeze(value);
}

/** Sorted uri order, the one every manifest, change set and observation uses. */
export function compareUris(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
