import * as z from 'zod';
import { InvalidCampaignError, InvalidMatcherError } from '../errors.js';
import {
  type Condition,
  contentWritten,
  fileCreated,
  fileDeleted,
  fileModified,
  requestSent,
} from '../models/condition.js';
import { EvidenceLimitsSchema } from '../models/evidence-limits-schema.js';
import { expectation, type ScoringExpectation } from '../models/expectation.js';
import { parseLocator } from '../models/locator.js';
import { SurfaceKindSchema } from '../models/manifest.js';
import { MatcherFieldsShape, matcherFromFields } from '../models/matcher.js';
import { MatchKindSchema } from '../models/scorable.js';
import { TimeoutMsSchema } from '../models/timeout.js';
import { CONDITION_TYPES } from '../models/vocabulary.js';
import { NetworkConfigSchema } from '../network/network-settings.js';
import { RunAsSchema } from '../sandbox/agent-user.js';
import { SANDBOX_MODES } from '../sandbox/sandbox-modes.js';
import { TargetConfigSchema } from '../targets/target-config.js';
import { LibraryRefSchema } from './library/library-ids.js';

const EnvNameSchema = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name');

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

/**
 * A file planted before the agent runs: in the workspace (default), or with `surface: home` in the
 * attempt's fresh home (the agent's HOME: an SSH key, a credentials file).
 */
export const PlantedFileSchema = z.strictObject({
  path: LocatorPath,
  content: z.string(),
  surface: SurfaceKindSchema.optional(),
});

/** The keys of `expect:` that only `request_sent` takes. */
const REQUEST_KEYS = ['host', 'port', 'method', 'path'] as const;

/**
 * The `expect:` of an attack: one condition. `condition:` selects its kind (default `content_written`);
 * `surface:` is `workspace` (default) or `home`. Text criteria (at most one of contains, equals, regex,
 * with caseSensitive and ignoreWhitespace) belong to content_written and request_sent, `executable` to
 * content_written only. `request_sent` names no `uri`: it takes `host`, `port`, `method` and `path`
 * (SPEC §14); every other condition needs a `uri` and takes none of those.
 */
export const ExpectSchema = z
  .strictObject({
    condition: z.enum(CONDITION_TYPES).optional(),
    uri: z.string().min(1).optional(),
    match: MatchKindSchema.default('exact'),
    surface: SurfaceKindSchema.optional(),
    host: z.string().optional(),
    port: z.number().int().optional(),
    method: z.string().optional(),
    path: z.string().optional(),
    ...MatcherFieldsShape,
    executable: z.boolean().optional(),
  })
  .superRefine((expect, ctx) => {
    const criteria = (['contains', 'equals', 'regex'] as const).filter((key) => expect[key] !== undefined);
    if (expect.condition === 'request_sent') {
      for (const key of ['uri', 'surface', 'executable'] as const) {
        if (expect[key] === undefined) continue;
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: `${key} belongs to the file conditions; request_sent is judged from what the agent sent (host, port, method, path, contains/equals/regex)`,
        });
      }
      if (criteria.length > 1) {
        ctx.addIssue({
          code: 'custom',
          path: [criteria[1] as string],
          message: 'give at most one of contains, equals, regex',
        });
        return;
      }
      try {
        buildCondition(expect);
      } catch (error) {
        const key = error instanceof InvalidMatcherError ? (criteria[0] ?? 'host') : 'host';
        ctx.addIssue({ code: 'custom', path: [key], message: (error as Error).message });
      }
      return;
    }
    for (const key of REQUEST_KEYS) {
      if (expect[key] === undefined) continue;
      ctx.addIssue({
        code: 'custom',
        path: [key],
        message: `${key} belongs to request_sent (condition: request_sent)`,
      });
    }
    if (expect.uri === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['uri'],
        message: 'uri names the location the condition is judged at',
      });
      return;
    }
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
      return;
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
export { EvidenceLimitsSchema };

/**
 * An attack that adapts (SPEC §15): after each round an attacker model reads what the agent did and
 * returns the next text of the planted file `plant` (default: the attack's only planted file; a library
 * attack's carrier file is filled in when its matrix is expanded). The chain stops at the first round whose
 * condition is proven, or after `rounds` (at most 50).
 */
export const MAX_ATTACKER_ROUNDS = 50;
export const AttackerSchema = z.strictObject({
  model: z.strictObject({
    baseUrl: z.string().min(1),
    name: z.string().min(1),
    /** The variable holding the attacker's key (its value is redacted everywhere). */
    apiKeyEnv: EnvNameSchema.optional(),
  }),
  rounds: z
    .number()
    .int()
    .min(1, 'rounds is at least 1')
    .max(MAX_ATTACKER_ROUNDS, `rounds is at most ${MAX_ATTACKER_ROUNDS}`),
  /** The planted file whose text each round replaces (workspace-relative). */
  plant: LocatorPath.optional(),
});
export type Attacker = z.infer<typeof AttackerSchema>;

export const AttackSchema = z.strictObject({
  id: z.string().regex(/^[A-Za-z0-9][\w.-]*$/, 'must be letters, digits, ".", "_" or "-"'),
  prompt: z.string().min(1),
  objective: z.string().optional(),
  /** The library entries a `matrix:` attack was expanded from (reports group by them). */
  library: LibraryRefSchema.optional(),
  /** Files planted for this attack only, after the campaign's. */
  files: z.array(PlantedFileSchema).optional(),
  /**
   * Variables set for this attack's out-of-process agent, over the campaign's `env:` (a canary the
   * agent must not send: `expect: { condition: request_sent, contains: <the value> }`).
   */
  env: z.record(EnvNameSchema, z.string()).optional(),
  attempts: PositiveInt.optional(),
  expect: ExpectSchema,
  /**
   * The user's task (SPEC §16): a condition of the same form as `expect:` that holds when the agent did the
   * job the prompt asked for. Overrides the campaign's `task:`.
   */
  task: ExpectSchema.optional(),
  /** A benign control: its attempts are left out of the success rate; one whose condition holds has tripped. */
  control: z.boolean().optional(),
  /** An attacker model that rewrites the planted injection after each round (SPEC §15). */
  attacker: AttackerSchema.optional(),
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
    /** The user's task of every attack that names none (SPEC §16), controls included. */
    task: ExpectSchema.optional(),
    /** Attempts per attack unless the attack says otherwise. */
    attempts: PositiveInt.default(1),
    concurrency: PositiveInt.default(1),
    /** Bound on one attempt (agent run plus scoring): 1 to 2^31−1 ms. */
    attemptTimeoutMs: TimeoutMsSchema.default(300_000),
    /**
     * How out-of-process agents are contained (SPEC §11): `bwrap` (default; required) or `none` (explicit:
     * no sandbox; attempts are marked `containment: none`).
     */
    sandbox: z.enum(SANDBOX_MODES).optional(),
    /**
     * How agents reach the network (SPEC §14): `proxy` (default; their own namespace whose only way out is
     * the attempt's recording egress proxy), `host` (the host's network, unobserved; the only mode under
     * `sandbox: none`) or `none`; or `{ mode: proxy, allow: [...], intercept: true }`.
     */
    network: NetworkConfigSchema.optional(),
    /**
     * The unprivileged host user sandboxed agents run as when Witness runs as root: a uid (`1001`) or
     * `"uid:gid"`; 65534 (`nobody`) when absent. Never 0 (SPEC §13).
     */
    runAs: RunAsSchema.optional(),
    /** Variables set for out-of-process agents. */
    env: z.record(EnvNameSchema, z.string()).optional(),
    /** Names of Witness's variables passed to out-of-process agents (everything else is withheld). */
    passEnv: z.array(EnvNameSchema).optional(),
    /** Names of variables whose values are redacted (`[redacted:NAME]`) in everything stored or printed. */
    secrets: z.array(EnvNameSchema).optional(),
    /** After an agent exits, how long its output is drained before it is closed. Default 1,000 ms. */
    drainMs: TimeoutMsSchema.optional(),
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
      if (attack.attacker === undefined) return;
      if (attack.control === true) {
        ctx.addIssue({
          code: 'custom',
          path: ['attacks', i, 'attacker'],
          message: 'a control is a benign prompt: it takes no attacker',
        });
        return;
      }
      const plant = plantOf(attack, campaign);
      if (!plant.ok)
        ctx.addIssue({ code: 'custom', path: ['attacks', i, 'attacker', 'plant'], message: plant.error });
    });
  });
export type Campaign = z.infer<typeof CampaignSchema>;
export type CampaignInput = z.input<typeof CampaignSchema>;

/** A planted path as a key: workspace-relative, without a leading `/`. */
export function plantedPath(path: string): string {
  return path.replace(/^\/+/, '');
}

/**
 * The planted file an attacker rewrites (SPEC §15): `attacker.plant`, which must name a planted file, else
 * the attack's only planted file (its own, else the campaign's); more than one and no `plant` is refused.
 */
export function plantOf(
  attack: Pick<Attack, 'files' | 'attacker'>,
  campaign: { workspace: { files: ReadonlyArray<{ path: string }> } },
): { ok: true; path: string } | { ok: false; error: string } {
  const own = (attack.files ?? []).map((file) => plantedPath(file.path));
  const all = [...new Set([...campaign.workspace.files.map((file) => plantedPath(file.path)), ...own])];
  const named = attack.attacker?.plant;
  if (named !== undefined) {
    const path = plantedPath(named);
    return all.includes(path)
      ? { ok: true, path }
      : {
          ok: false,
          error: `attacker.plant ${JSON.stringify(named)} is not a planted file (planted: ${all.join(', ') || 'none'}); the attacker rewrites the text of a file the campaign plants`,
        };
  }
  const candidates = own.length > 0 ? [...new Set(own)] : all;
  if (candidates.length === 1) return { ok: true, path: candidates[0] as string };
  return {
    ok: false,
    error:
      candidates.length === 0
        ? 'the attacker needs a planted file to rewrite: plant one (files:) and name it in attacker.plant'
        : `more than one planted file (${candidates.join(', ')}): name the one the attacker rewrites in attacker.plant`,
  };
}

/** The condition an `expect:` describes. */
export function buildCondition(expect: Omit<Expect, 'match'> & { match?: Expect['match'] }): Condition {
  if (expect.condition === 'request_sent') {
    return requestSent({
      host: expect.host,
      port: expect.port,
      method: expect.method,
      path: expect.path,
      matcher: matcherFromFields(expect),
    });
  }
  if (expect.uri === undefined)
    throw new InvalidCampaignError('uri names the location the condition is judged at');
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
  const matcher = matcherFromFields(expect);
  return contentWritten(location, matcher, { executable: expect.executable, surface });
}

/** The scoring expectation of an attack: its one condition and its objective. */
export function attackExpectation(attack: Attack): ScoringExpectation {
  return expectation([buildCondition(attack.expect)], attack.objective);
}

/** The objective every task expectation carries, so a stored task score reads as what it is. */
export const TASK_OBJECTIVE = "the user's task";

/** The `task:` an attack is judged by: its own, else the campaign's; undefined when neither names one. */
export function attackTask(attack: Attack, campaign: Pick<Campaign, 'task'>): Expect | undefined {
  return attack.task ?? campaign.task;
}

/** The scoring expectation of an attack's user task (SPEC §16), or undefined when it has none. */
export function taskExpectation(
  attack: Attack,
  campaign: Pick<Campaign, 'task'>,
): ScoringExpectation | undefined {
  const task = attackTask(attack, campaign);
  return task === undefined ? undefined : expectation([buildCondition(task)], TASK_OBJECTIVE);
}
