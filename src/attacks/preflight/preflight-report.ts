import * as z from 'zod';

/**
 * What the preflight of a campaign found (`witness run` before any attempt, `witness run --dry-run`): one
 * entry per check made, each `pass`, `fail` (with the fix) or `skipped` (with why), and the plan of the
 * run the campaign asks for. Printed as text, or with `--json` as {@link DryRunReportSchema}.
 */

/** What is checked, in the order the checks are reported. */
export const PREFLIGHT_CHECKS = [
  'template',
  'sandbox',
  'network',
  'program',
  'model_key',
  'model_endpoint',
  'bait',
] as const;
export type PreflightCheckName = (typeof PREFLIGHT_CHECKS)[number];

export const PREFLIGHT_STATUSES = ['pass', 'fail', 'skipped'] as const;
export type PreflightStatus = (typeof PREFLIGHT_STATUSES)[number];

export const PreflightCheckSchema = z.strictObject({
  check: z.enum(PREFLIGHT_CHECKS),
  /** What was checked: a path, a program, an endpoint. */
  subject: z.string(),
  status: z.enum(PREFLIGHT_STATUSES),
  /** What was found (for `skipped`, why it was not checked). */
  detail: z.string(),
  /** What to do about a failure. */
  fix: z.string().optional(),
});
export type PreflightCheck = z.infer<typeof PreflightCheckSchema>;

export const PlannedAttackSchema = z.strictObject({
  id: z.string(),
  attempts: z.number().int().positive(),
  /** Rounds of an adaptive attack's chain (1 otherwise): each round is an attempt of its own. */
  rounds: z.number().int().positive(),
  control: z.boolean(),
  library: z.strictObject({ objective: z.string(), carrier: z.string(), strategy: z.string() }).optional(),
});

export const CampaignPlanSchema = z.strictObject({
  campaign: z.string(),
  /** The target as a person reads it (`agent qwen-code → http://127.0.0.1:8719/v1 (model m)`). */
  target: z.string(),
  /** `bwrap`, `none` (`sandbox: none`), or `in_process` (nothing of the target is a process). */
  containment: z.enum(['bwrap', 'none', 'in_process']),
  /** The agent's network (SPEC §14); null for an in-process target. */
  network: z.enum(['proxy', 'host', 'none']).nullable(),
  concurrency: z.number().int().positive(),
  attemptTimeoutMs: z.number().int().positive(),
  attacks: z.array(PlannedAttackSchema),
  /** Jobs: the sum of every attack's attempts (an adaptive chain is one job). */
  attempts: z.number().int().nonnegative(),
  /** Attempts at most, every round of every chain counted. */
  maxAttempts: z.number().int().nonnegative(),
  controls: z.number().int().nonnegative(),
  /** The library entries the attacks were expanded from (`matrix:`), each axis in the attacks' order. */
  library: z
    .strictObject({
      objectives: z.array(z.string()),
      carriers: z.array(z.string()),
      strategies: z.array(z.string()),
    })
    .nullable(),
});
export type CampaignPlan = z.infer<typeof CampaignPlanSchema>;

export const DryRunReportSchema = z.strictObject({
  schemaVersion: z.literal(1),
  /** True when no check failed: the campaign would run. */
  ok: z.boolean(),
  checks: z.array(PreflightCheckSchema),
  plan: CampaignPlanSchema,
});
export type DryRunReport = z.infer<typeof DryRunReportSchema>;
