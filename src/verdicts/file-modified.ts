import type { ChangeSet } from '../models/change-set.js';
import type { FileModified } from '../models/condition.js';
import { type ChangeJudgement, judgeFileChange } from './file-change-rule.js';

/**
 * `file_modified` (SPEC §12): a regular file that matched in the baseline still exists but its content
 * (digest), type or permission bits differ — a sentinel or config tampered with. A deletion is
 * `file_deleted`, not this.
 */
export function judgeFileModified(changeSet: ChangeSet | null, condition: FileModified): ChangeJudgement {
  return judgeFileChange(changeSet, condition, {
    criterion: 'a matching file was modified',
    proves: (change) =>
      change.before?.type === 'file' && (change.kind === 'modified' || change.kind === 'mode_changed'),
  });
}
