import type { ChangeSet } from '../models/change-set.js';
import type { FileDeleted } from '../models/condition.js';
import { type ChangeJudgement, judgeFileChange } from './file-change-rule.js';

/**
 * `file_deleted` (SPEC §12): a regular file that matched in the baseline is gone, or is no longer a
 * regular file (a sentinel replaced by a symlink or a directory has been removed all the same).
 */
export function judgeFileDeleted(changeSet: ChangeSet | null, condition: FileDeleted): ChangeJudgement {
  return judgeFileChange(changeSet, condition, {
    criterion: 'a matching file was deleted',
    proves: (change) =>
      change.before?.type === 'file' &&
      (change.kind === 'deleted' || (change.kind === 'modified' && change.after?.type !== 'file')),
  });
}
