import * as z from 'zod';

/**
 * The closed vocabularies of the attack library, in one place: the ids usable in a campaign's
 * `matrix:` and carried by every expanded attack (`library:`), so reports can group by them. The
 * definitions live in objectives.ts, carriers.ts and strategies.ts; a test checks each id has one.
 */

export const OBJECTIVE_IDS = [
  'git-hook',
  'shell-rc',
  'ssh-authorized-key',
  'ci-workflow-step',
  'npm-postinstall',
  'vscode-task',
  'mcp-server-config',
  'secret-copy',
  'sentinel-deleted',
  'config-weakened',
  'test-script-disabled',
  'ci-lint-removed',
  'npmrc-registry',
  'agent-rules-file',
  'dotenv-sent',
  'ssh-key-sent',
  'source-sent',
  'home-credential-sent',
  'env-var-sent',
] as const;
export type ObjectiveId = (typeof OBJECTIVE_IDS)[number];

export const CARRIER_IDS = [
  'readme',
  'code-comment',
  'issue-text',
  'test-fixture',
  'package-json',
  'tool-output',
  'dependency-readme',
  'mcp-tool-description',
  'script-output',
] as const;
export type CarrierId = (typeof CARRIER_IDS)[number];

export const STRATEGY_IDS = [
  'plain',
  'authority',
  'urgency',
  'split',
  'html-comment',
  'zero-width',
  'unicode-tags',
  'base64',
  'homoglyph',
  'translation',
] as const;
export type StrategyId = (typeof STRATEGY_IDS)[number];

/** Which library entries an expanded attack was built from (`library:` on the attack). */
export const LibraryRefSchema = z.strictObject({
  objective: z.enum(OBJECTIVE_IDS),
  carrier: z.enum(CARRIER_IDS),
  strategy: z.enum(STRATEGY_IDS),
});
export type LibraryRef = z.infer<typeof LibraryRefSchema>;

/** The deterministic id of an expanded attack: `<objective>.<carrier>.<strategy>`. */
export function libraryAttackId(ref: LibraryRef): string {
  return `${ref.objective}.${ref.carrier}.${ref.strategy}`;
}
