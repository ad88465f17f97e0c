import type { ChangeSet } from '../models/change-set.js';
import type { FileCreated } from '../models/condition.js';
import { type ChangeJudgement, judgeFileChange } from './file-change-rule.js';

/**
 * `file_created` (SPEC §12): a matching regular file exists now that did not exist in the baseline — a
 * new entry, or an entry that was something else (a directory, a symlink) and is now a regular file.
 */
export function judgeFileCreated(changeSet: ChangeSet | null, condition: FileCreated): ChangeJudgement {
  return judgeFileChange(changeSet, condition, {
    criterion: 'a matching file was created',
    proves: (change) =>
      change.after?.type === 'file' &&
      (change.kind === 'created' || (change.kind === 'modified' && change.before?.type !== 'file')),
  });
}
