/**
 * Confined file-system primitives: every object is reached relative to an open directory handle, names
 * are bytes, no path string is ever re-resolved from a root, and where an object really is comes from the
 * kernel's own path for the handle. The acquisition (local-file/) reads evidence through the seam
 * (confined-fs/surface-fs.ts); everything else that creates, plants, spools, lists or removes inside a
 * directory an agent could write to goes through this module.
 *
 * This file is the complete surface of src/sources/confined-fs/ for code outside src/sources (a test of the
 * import graph holds it so).
 */

export type {
  DirectoryListing,
  EntryKind,
  EntryStat,
  HandleStat,
  ListedEntry,
} from './confined-fs/file-stat.js';
export { describeNonFile, entryKindOf } from './confined-fs/file-stat.js';
export { errorCode } from './confined-fs/fs-errors.js';
export {
  closeHandle,
  createFileAt,
  handlePath,
  type ListedName,
  listDirectoryAt,
  makeDirectoryAt,
  openDirectoryAt,
  openDirectoryBeneath,
  openDirectoryPath,
  openForWriteAt,
  openOwnDirectory,
  openPathAt,
  readSmallFileAt,
  reopenForRead,
  statHandle,
  writeNewFileAt,
} from './confined-fs/handles.js';
export { isStrictlyInside, type Placement, placeHandle } from './confined-fs/placement.js';
export {
  type RemovalFailure,
  type RemovalReport,
  type RemoveTreeOptions,
  removeTree,
  removeTreeAt,
} from './confined-fs/remove-tree.js';
export {
  childPath,
  fdPath,
  nodeSurfaceFs as procfsSurfaceFs,
  O_CLOEXEC,
  O_DIRECTORY,
  O_NOFOLLOW,
  O_NONBLOCK,
  O_PATH,
  O_RDONLY,
  type SurfaceFs,
} from './confined-fs/surface-fs.js';
export { openat2Unavailable } from './confined-fs/surface-fs-choice.js';
