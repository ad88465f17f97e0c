import { z } from 'zod';
import { InvalidMatcherError } from '../errors.js';
import {
  type Condition,
  contentWritten,
  fileCreated,
  fileDeleted,
  fileModified,
} from '../models/condition.js';
import { expectation, type ScoringExpectation } from '../models/expectation.js';
import { parseLocator } from '../models/locator.js';
import { SurfaceKindSchema } from '../models/manifest.js';
import { contains, equals, type Matcher, regex } from '../models/matcher.js';
import { MatchKindSchema } from '../models/scorable.js';
import { CONDITION_TYPES } from '../models/vocabulary.js';
import { TargetConfigSchema } from '../targets/target-config.js';

/**
 * A campaign: one target, a workspace recipe, and attacks (a prompt plus the `content_written` condition
 * that proves the attack worked), each tried `attempts` times in fresh workspaces. This is the schema of a
 * campaign file (YAML); see docs/attacks.md for a worked example.
 */

const PositiveInt = z.number().int().positive();

const LocatorPath = z.string().superRefine((path, ctx) => {
  try {
    parseLocator(path.startsWith('/') ? path : `/${path}`, 'exact');
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: (error as Error).message });
  }
});

export const PlantedFileSchema = z.strictObject({ path: LocatorPath, content: z.string() });

/**
 * The `expect:` of an attack: one condition. `condition:` selects its kind (default `content_written`);
 * `surface:` is `workspace` (default) or `home`. Text criteria (at most one of contains, equals, regex,
 * with caseSensitive and ignoreWhitespace) and `executable` belong to content_written only.
 */
export const ExpectSchema = z
  .strictObject({
    condition: z.enum(CONDITION_TYPES).optional(),
    uri: z.string().min(1),
    match: MatchKindSchema.default('exact'),
    surface: SurfaceKindSchema.optional(),
    contains: z.string().optional(),
    equals: z.string().optional(),
    regex: z.string().optional(),
    caseSensitive: z.boolean().optional(),
    ignoreWhitespace: z.boolean().optional(),
    executable: z.boolean().optional(),
  })
  .superRefine((expect, ctx) => {
    const criteria = (['contains', 'equals', 'regex'] as const).filter((key) => expect[key] !== undefined);
    if ((expect.condition ?? 'content_written') !== 'content_written') {
      for (const key of [...criteria, 'caseSensitive', 'ignoreWhitespace', 'executable'] as const) {
        if (expect[key] === undefined) continue;
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: `${key} belongs to content_written; ${expect.condition} is judged from what changed, not from text`,
        });
      }
      return;
    }
    if (criteria.length > 1) {
      ctx.addIssue({
        code: 'custom',
        path: [criteria[1] as string],
        message: 'give at most one of contains, equals, regex',
      });
    }
    try {
      buildCondition(expect);
    } catch (error) {
      const key = error instanceof InvalidMatcherError ? (criteria[0] ?? 'uri') : 'uri';
      ctx.addIssue({ code: 'custom', path: [key], message: (error as Error).message });
    }
  });
export type Expect = z.infer<typeof ExpectSchema>;

/** Budgets of the evidence read after each attempt (LocalFileSurfaceSource limits, SPEC §5). */
export const EvidenceLimitsSchema = z.strictObject({
  maxFiles: PositiveInt.optional(),
  maxContentBytes: PositiveInt.optional(),
  maxReadBytes: PositiveInt.optional(),
  maxListedEntries: PositiveInt.optional(),
});

export const AttackSchema = z.strictObject({
  id: z.string().regex(/^[A-Za-z0-9][\w.-]*$/, 'must be letters, digits, ".", "_" or "-"'),
  prompt: z.string().min(1),
  objective: z.string().optional(),
  /** Files planted for this attack only, after the campaign's. */
  files: z.array(PlantedFileSchema).optional(),
  attempts: PositiveInt.optional(),
  expect: ExpectSchema,
  /** A benign control: its attempts are left out of the success rate; one whose condition holds has tripped. */
  control: z.boolean().optional(),
  /** Overrides the campaign's evidence budgets for this attack. */
  evidence: EvidenceLimitsSchema.optional(),
});
export type Attack = z.infer<typeof AttackSchema>;

export const CampaignSchema = z
  .strictObject({
    schemaVersion: z.literal(1).default(1),
    name: z.string().min(1),
    description: z.string().optional(),
    target: TargetConfigSchema,
    workspace: z
      .strictObject({ template: z.string().min(1).optional(), files: z.array(PlantedFileSchema).default([]) })
      .default({ files: [] }),
    /** Attempts per attack unless the attack says otherwise. */
    attempts: PositiveInt.default(1),
    concurrency: PositiveInt.default(1),
    /** Bound on one attempt (agent run plus scoring). */
    attemptTimeoutMs: PositiveInt.default(300_000),
    /** Budgets of the evidence read after each attempt (defaults as in SPEC §5). */
    evidence: EvidenceLimitsSchema.default({}),
    attacks: z.array(AttackSchema).min(1, 'a campaign needs at least one attack'),
  })
  .superRefine((campaign, ctx) => {
    const seen = new Set<string>();
    campaign.attacks.forEach((attack, i) => {
      if (seen.has(attack.id)) {
        ctx.addIssue({
          code: 'custom',
          path: ['attacks', i, 'id'],
          message: `duplicate attack id ${attack.id}`,
        });
      }
      seen.add(attack.id);
    });
  });
export type Campaign = z.infer<typeof CampaignSchema>;
export type CampaignInput = z.input<typeof CampaignSchema>;

/** The condition an `expect:` describes. */
export function buildCondition(expect: Omit<Expect, 'match'> & { match?: Expect['match'] }): Condition {
  const location = { uri: expect.uri, match: expect.match ?? 'exact' };
  const surface = expect.surface;
  switch (expect.condition ?? 'content_written') {
    case 'file_created':
      return fileCreated(location, { surface });
    case 'file_deleted':
      return fileDeleted(location, { surface });
    case 'file_modified':
      return fileModified(location, { surface });
    case 'content_written':
      break;
  }
  const options = {
    ...(expect.caseSensitive === undefined ? {} : { caseSensitive: expect.caseSensitive }),
    ...(expect.ignoreWhitespace === undefined ? {} : { ignoreWhitespace: expect.ignoreWhitespace }),
  };
  let matcher: Matcher | undefined;
  if (expect.contains !== undefined) matcher = contains(expect.contains, options);
  else if (expect.equals !== undefined) matcher = equals(expect.equals, options);
  else if (expect.regex !== undefined) matcher = regex(expect.regex, options);
  return contentWritten(location, matcher, { executable: expect.executable, surface });
}

/** The scoring expectation of an attack: its one condition and its objective. */
export function attackExpectation(attack: Attack): ScoringExpectation {
  return expectation([buildCondition(attack.expect)], attack.objective);
}
