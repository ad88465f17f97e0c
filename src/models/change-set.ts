import * as z from 'zod';
import { matchesLocator, parseLocator } from './locator.js';
import { ManifestEntrySchema, ManifestSchema, SurfaceKindSchema } from './manifest.js';
import { AcquisitionStatusSchema, CoverageGapSchema, SurfaceCoverageSchema } from './observation.js';
import { parseRecord, TimestampSchema } from './record.js';
import { UriSchema } from './scorable.js';
import { CHANGE_KINDS } from './vocabulary.js';

/**
 * What an attempt changed on one surface (SPEC §12): the difference between the manifest taken after
 * planting (the baseline) and the one taken after the agent ended (final).
 *
 * - `created`: an entry that the baseline did not hold (a rename shows as a deletion plus a creation;
 *   `movedFrom` names the deleted file with the same digest).
 * - `modified`: the content (digest, size or link target) or the type differs.
 * - `deleted`: a baseline entry the final manifest does not hold.
 * - `mode_changed`: only the permission bits differ.
 *
 * Complete only when both manifests are complete. Otherwise the changes listed are still real (each rests
 * on entries both manifests hold or a gap that cannot hide them), `undecided` names the entries whose
 * change could not be told, and the coverage carries the gaps of both manifests.
 *
 * **Agent state** (SPEC §13): an agent CLI writes its own caches, sessions and logs into its home on every
 * run, whatever it was asked. A preset names those paths (`agentStatePaths`); a change there is still
 * listed (and judged by every condition) but marked `agentState`, and the headline counts
 * ({@link countChanges}) leave it out, so a control that changed nothing does not read as 23 changes.
 */

export const ChangeKindSchema = z.enum(CHANGE_KINDS);

export const ChangeSchema = z
  .strictObject({
    uri: UriSchema,
    kind: ChangeKindSchema,
    /** The entry in the baseline; null for a creation. */
    before: ManifestEntrySchema.nullable(),
    /** The entry in the final manifest; null for a deletion. */
    after: ManifestEntrySchema.nullable(),
    /** For a created file: a deleted file with the same digest (a rename or move). */
    movedFrom: UriSchema.optional(),
    /** The change lies in the agent CLI's own state (a path of `agentStatePaths`): listed apart. */
    agentState: z.literal(true).optional(),
  })
  .superRefine((change, ctx) => {
    if ((change.before === null) !== (change.kind === 'created')) {
      ctx.addIssue({ code: 'custom', path: ['before'], message: 'before is null exactly for a creation' });
    }
    if ((change.after === null) !== (change.kind === 'deleted')) {
      ctx.addIssue({ code: 'custom', path: ['after'], message: 'after is null exactly for a deletion' });
    }
    for (const side of ['before', 'after'] as const) {
      const entry = change[side];
      if (entry !== null && entry.uri !== change.uri) {
        ctx.addIssue({ code: 'custom', path: [side, 'uri'], message: 'must be the change uri' });
      }
    }
  });
export type Change = z.infer<typeof ChangeSchema>;

export const ChangeSetSchema = z
  .strictObject({
    schemaVersion: z.literal(1),
    surface: SurfaceKindSchema,
    baselineTakenAt: TimestampSchema,
    finalTakenAt: TimestampSchema,
    baselineAcquisition: AcquisitionStatusSchema,
    finalAcquisition: AcquisitionStatusSchema,
    /** Sorted by uri, one change per uri. */
    changes: z.array(ChangeSchema),
    /** Entries whose change could not be told (a digest missing on one side, a gap that could hide them). */
    undecided: z.array(UriSchema),
    /**
     * Glob locators of the agent CLI's own state on this surface (its preset's caches, sessions, logs),
     * each covering what lies beneath it too; absent when none were named. Changes there carry
     * `agentState`.
     */
    agentStatePaths: z.array(UriSchema).optional(),
    /** Both manifests' gaps; complete exactly when both manifests are. */
    coverage: SurfaceCoverageSchema,
    /**
     * Uris both manifests looked up on their own (Manifest.lookups): for each, the change (or its
     * absence) rests on the two lookups, and only gaps naming that very uri can hide it. Sorted, unique.
     */
    lookups: z.array(UriSchema).optional(),
    /**
     * What the change set sees at paths through in-root links (SPEC §13: `.git -> real-git` is judged
     * like `.git`, and a link to a regular file beneath the root like that file), kept apart so each file
     * is listed once in `changes`: the changes at such paths (their entries name the links in `via`), the
     * entries there whose change could not be told (a changed link whose target cannot be told among
     * them), and the gaps seen through links or left by links not followed. Judged like the rest; absent
     * when no link is seen through.
     */
    throughLinks: z
      .strictObject({
        changes: z.array(ChangeSchema),
        undecided: z.array(UriSchema),
        gaps: z.array(CoverageGapSchema),
      })
      .optional(),
  })
  .superRefine((set, ctx) => {
    for (let i = 1; i < set.changes.length; i++) {
      if ((set.changes[i - 1] as Change).uri >= (set.changes[i] as Change).uri) {
        ctx.addIssue({
          code: 'custom',
          path: ['changes', i, 'uri'],
          message: 'changes are sorted by uri, one per uri',
        });
      }
    }
    const both = set.baselineAcquisition === 'complete' && set.finalAcquisition === 'complete';
    if (set.coverage.complete !== both) {
      ctx.addIssue({
        code: 'custom',
        path: ['coverage', 'complete'],
        message: 'a change set is complete exactly when both manifests are complete',
      });
    }
    if (set.coverage.complete && set.undecided.length > 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['undecided'],
        message: 'a complete change set decides every entry',
      });
    }
    let inAgentState: (uri: string) => boolean;
    try {
      inAgentState = agentStateMatcher(set.agentStatePaths ?? []);
    } catch (error) {
      ctx.addIssue({ code: 'custom', path: ['agentStatePaths'], message: (error as Error).message });
      return;
    }
    const checkAgentState = (list: readonly Change[], path: (string | number)[]) =>
      list.forEach((change, i) => {
        if ((change.agentState === true) !== inAgentState(change.uri)) {
          ctx.addIssue({
            code: 'custom',
            path: [...path, i, 'agentState'],
            message: 'a change is marked agentState exactly when its uri lies in agentStatePaths',
          });
        }
      });
    checkAgentState(set.changes, ['changes']);
    checkAgentState(set.throughLinks?.changes ?? [], ['throughLinks', 'changes']);
    const through = set.throughLinks?.changes ?? [];
    for (let i = 1; i < through.length; i++) {
      if ((through[i - 1] as Change).uri >= (through[i] as Change).uri) {
        ctx.addIssue({
          code: 'custom',
          path: ['throughLinks', 'changes', i, 'uri'],
          message: 'changes are sorted by uri, one per uri',
        });
      }
    }
  });
export type ChangeSet = z.infer<typeof ChangeSetSchema>;

/**
 * True for a uri inside the agent CLI's own state: a uri one of the glob locators matches, or one beneath
 * it (`/.codex/sessions` covers the directory and everything in it).
 */
export function agentStateMatcher(paths: readonly string[]): (uri: string) => boolean {
  const locators = paths.flatMap((path) => [
    parseLocator(path, 'glob'),
    parseLocator(`${path.replace(/\/+$/, '')}/**`, 'glob'),
  ]);
  return (uri) => locators.some((locator) => matchesLocator(locator, uri));
}

export function checkChangeSet(value: unknown): ChangeSet {
  return parseRecord(ChangeSetSchema, value, 'change set');
}

/** Counts per change kind of the agent's own changes (agent state left out), for tables. */
export function countChanges(set: Pick<ChangeSet, 'changes'>): Record<Change['kind'], number> {
  const counts = { created: 0, modified: 0, deleted: 0, mode_changed: 0 };
  for (const change of set.changes) if (change.agentState !== true) counts[change.kind]++;
  return counts;
}

/** How many changes lie in the agent CLI's own state (left out of {@link countChanges}). */
export function countAgentStateChanges(set: Pick<ChangeSet, 'changes'>): number {
  return set.changes.filter((change) => change.agentState === true).length;
}

/**
 * The change evidence of one attempt on one surface, stored with the attempt: both manifests (so the
 * bait rule and the change conditions can be judged again offline) and their change set. A manifest that
 * could not be taken at all is null, with the reason in `error`; the change set is then null too.
 */
export const SurfaceChangesSchema = z.strictObject({
  surface: SurfaceKindSchema,
  baseline: ManifestSchema.nullable(),
  final: ManifestSchema.nullable(),
  changeSet: ChangeSetSchema.nullable(),
  error: z.string().nullable(),
});
export type SurfaceChanges = z.infer<typeof SurfaceChangesSchema>;
