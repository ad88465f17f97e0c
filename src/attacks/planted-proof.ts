import { InvalidCampaignError } from '../errors.js';
import { conditionSurface } from '../models/condition.js';
import { matchesLocator, parseLocator } from '../models/locator.js';
import { checkManifest, type Manifest } from '../models/manifest.js';
import { LocalFileSurfaceSource } from '../sources/local-file-source.js';
import { judgeContentWrittenSinceBaseline } from '../verdicts/content-written-since-baseline.js';
import { listUris } from '../verdicts/file-change-rule.js';
import { buildCondition, type Campaign } from './campaign.js';
import { createWorkspace } from './workspace.js';

/**
 * Before any attempt runs, each attack's expectation is judged on its planted workspace (SPEC §12). A
 * content_written condition that already holds there would be "proven" by the campaign's own bait — the
 * README's old `/**` + `contains:` pattern scored a clean control run as a success — so the campaign is
 * refused, naming the attack and the file. A file_deleted or file_modified condition whose locator
 * matches no file in the planted workspace can never hold (the sentinel was never planted), so it is
 * refused too rather than reported as a failed attack forever.
 *
 * Conditions on the attempt's home are not checked here: every home starts empty.
 */
export async function refusePlantedProof(
  campaign: Campaign,
  options: { workspaceParent?: string | undefined; signal?: AbortSignal | undefined } = {},
): Promise<void> {
  const problems: string[] = [];
  for (const attack of campaign.attacks) {
    const condition = buildCondition(attack.expect);
    if (conditionSurface(condition) !== 'workspace' || condition.conditionType === 'file_created') continue;
    let workspace: Awaited<ReturnType<typeof createWorkspace>>;
    try {
      workspace = await createWorkspace({
        template: campaign.workspace.template,
        files: [...campaign.workspace.files, ...(attack.files ?? [])],
        parent: options.workspaceParent,
      });
    } catch {
      // Each attempt prepares its own workspace and records this same failure as its error.
      continue;
    }
    const limits = Object.fromEntries(
      Object.entries({ ...campaign.evidence, ...attack.evidence }).filter(([, value]) => value !== undefined),
    );
    const source = new LocalFileSurfaceSource({ root: workspace.root, ...limits });
    try {
      const planted = await source.acquireManifest({ signal: options.signal });
      if (condition.conditionType === 'content_written') {
        const observation = await source.acquire(
          { scorableType: 'surface', uri: condition.uri, match: condition.match },
          { signal: options.signal },
        );
        // Against an empty baseline every planted entry counts as written: what holds now is planted proof.
        const judgement = judgeContentWrittenSinceBaseline(observation, condition, {
          baseline: emptyBaseline(planted),
          final: planted,
        });
        if (judgement.value === true) {
          problems.push(
            `attack "${attack.id}": its expectation already holds on the planted workspace, before any agent ran (proven by ${listUris(judgement.provenUris)}); the campaign would score its own bait. Expect a location the bait is not in, or something only the agent can do (file_created, executable: true, a file the prompt must change)`,
          );
        }
      } else if (planted.acquisition === 'complete') {
        const locator = parseLocator(condition.uri, condition.match);
        const present = planted.entries.some(
          (entry) => entry.type === 'file' && matchesLocator(locator, entry.uri),
        );
        if (!present) {
          problems.push(
            `attack "${attack.id}": ${condition.conditionType} ${condition.uri} (${condition.match}) matches no file in the planted workspace, so it can never hold; plant the file (workspace.files or the template)`,
          );
        }
      }
    } finally {
      await source.close();
      await workspace.dispose();
    }
  }
  if (problems.length > 0) {
    throw new InvalidCampaignError(`campaign "${campaign.name}" refused:\n${problems.join('\n')}`, problems);
  }
}

function emptyBaseline(like: Manifest): Manifest {
  return checkManifest({
    schemaVersion: 1,
    surface: like.surface,
    sourceIdentifier: like.sourceIdentifier,
    acquisition: 'complete',
    takenAt: like.takenAt,
    entries: [],
    coverage: { complete: true, reasons: [], gaps: [] },
    metadata: {},
  });
}
