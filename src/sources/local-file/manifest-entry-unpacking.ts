import { CheckedManifestEntries, type ManifestEntry } from '../../models/manifest.js';
import { MANIFEST_ENTRY_TYPES } from '../../models/vocabulary.js';
import { isPackedManifestEntries } from './packed-entries.js';

/**
 * The caller's side of a manifest's packed batches (packed-entries.ts explains the wire form). Kept apart
 * from the packing so that a pool thread never loads the entry rule and its schemas.
 */

/**
 * Checks one packed batch: every entry built from the columns and checked by the entry rule; the list is
 * frozen and registered as checked (CheckedManifestEntries). Throws on a batch that is not packed or whose
 * columns disagree (a bug), and InvalidRecordError on an invalid entry.
 */
export function unpackManifestEntries(batch: unknown): ManifestEntry[] {
  // Pool threads pack every manifest batch (acquire-worker.ts); anything else here is a bug.
  if (!isPackedManifestEntries(batch)) throw new TypeError('a manifest entry batch arrived unpacked: a bug');
  const { uris, types, sizes, modes, sha256s, linkTargets } = batch;
  const count = uris.length;
  if (
    types.length !== count ||
    sizes.length !== count ||
    modes.length !== count ||
    sha256s.length !== count ||
    linkTargets.length !== count
  ) {
    throw new TypeError('a packed manifest batch has columns of different lengths: a bug');
  }
  const checked = new CheckedManifestEntries();
  for (let i = 0; i < count; i++) {
    // An unknown code gives `undefined`, which the entry rule refuses.
    const type = MANIFEST_ENTRY_TYPES[types[i] as number];
    checked.add(uris[i], type, sizes[i], sha256s[i], modes[i], linkTargets[i]);
  }
  return checked.list();
}
