import { InvalidCampaignError } from '../errors.js';
import { matchText } from '../matching/text-matcher.js';
import {
  type Condition,
  conditionSurface,
  type FileCondition,
  isFileCondition,
} from '../models/condition.js';
import { matchesLocator, parseLocator } from '../models/locator.js';
import { checkManifest, type Manifest } from '../models/manifest.js';
import { LocalFileSurfaceSource } from '../sources/local-file-source.js';
import { judgeContentWrittenSinceBaseline } from '../verdicts/content-written-since-baseline.js';
import { listUris } from '../verdicts/file-change-rule.js';
import { attackTask, buildCondition, type Campaign } from './campaign.js';
import { createWorkspace } from './workspace.js';

/**
 * Before any attempt runs, each attack's expectation and user task are judged on its planted workspace
 * (SPEC §12, §16). A content_written condition that already holds there would be "proven" by the
 * campaign's own bait — the README's old `/**` + `contains:` pattern scored a clean control run as a
 * success, and a task whose summary file is planted would count as work the agent never did — so the
 * campaign is refused, naming the attack, the condition and the file. A file_deleted or file_modified
 * condition whose locator matches no file in the planted workspace can never hold (the sentinel was never
 * planted), so it is refused too rather than reported as a failure forever; so is a task's file_created on
 * an exact path that is planted (a file that was there before the agent cannot be created by it).
 *
 * Conditions on the attempt's home are checked the same way on the planted home when the attack plants
 * files there (`surface: home`); otherwise the home starts empty and they are skipped. A request_sent condition
 * cannot hold before the agent sends anything; but one whose text criterion the prompt itself satisfies is
 * refused: an agent that only repeats its prompt to a URL would "prove" it without reading any secret.
 */
export async function refusePlantedProof(
  campaign: Campaign,
  options: { workspaceParent?: string | undefined; signal?: AbortSignal | undefined } = {},
): Promise<void> {
  const problems: string[] = [];
  for (const attack of campaign.attacks) {
    const task = attackTask(attack, campaign);
    const conditions = [
      { role: 'expectation' as const, condition: buildCondition(attack.expect) },
      ...(task === undefined ? [] : [{ role: 'task' as const, condition: buildCondition(task) }]),
    ];
    for (const { role, condition } of conditions) {
      const problem = promptProblem(role, condition, attack.prompt);
      if (problem !== undefined) problems.push(`attack "${attack.id}": ${problem}`);
    }
    const files = [...campaign.workspace.files, ...(attack.files ?? [])];
    const homePlanted = files.some((file) => file.surface === 'home');
    const checks: PlantedCheck[] = conditions
      .flatMap(({ role, condition }) => (isFileCondition(condition) ? [{ role, condition }] : []))
      .filter((check) => needsPlantedCheck(check, homePlanted));
    if (checks.length === 0) continue;
    let workspace: Awaited<ReturnType<typeof createWorkspace>>;
    try {
      workspace = await createWorkspace({
        template: campaign.workspace.template,
        files,
        parent: options.workspaceParent,
      });
    } catch {
      // Each attempt prepares its own workspace and records this same failure as its error.
      continue;
    }
    const limits = Object.fromEntries(
      Object.entries({ ...campaign.evidence, ...attack.evidence }).filter(([, value]) => value !== undefined),
    );
    try {
      for (const surface of ['workspace', 'home'] as const) {
        const mine = checks.filter((check) => conditionSurface(check.condition) === surface);
        if (mine.length === 0) continue;
        const root = surface === 'home' ? workspace.home.path : workspace.root;
        const source = new LocalFileSurfaceSource({ root, ...limits });
        try {
          const planted = await source.acquireManifest({ signal: options.signal });
          for (const check of mine) {
            const problem = await plantedProblem(check, planted, source, options.signal, surface);
            if (problem !== undefined) problems.push(`attack "${attack.id}": ${problem}`);
          }
        } finally {
          await source.close();
        }
      }
    } finally {
      await workspace.dispose();
    }
  }
  if (problems.length > 0) {
    throw new InvalidCampaignError(`campaign "${campaign.name}" refused:\n${problems.join('\n')}`, problems);
  }
}

interface PlantedCheck {
  role: 'expectation' | 'task';
  condition: FileCondition;
}

/**
 * A request_sent condition cannot hold before the agent sends anything, but one whose text criterion the
 * prompt itself satisfies proves nothing: an agent that only repeats its prompt to a URL would meet it.
 */
function promptProblem(
  role: 'expectation' | 'task',
  condition: Condition,
  prompt: string,
): string | undefined {
  if (condition.conditionType !== 'request_sent' || condition.matcher === undefined) return undefined;
  if (matchText(condition.matcher, prompt) !== 'match') return undefined;
  return `${role === 'task' ? 'its task' : 'its expectation'} (request_sent) looks for text its prompt already holds, so an agent that only repeats its prompt would meet it; expect a secret the agent must read (a planted file, an env: value)`;
}

/**
 * Home conditions are skipped when nothing is planted in the home (it starts empty); so is an
 * expectation's file_created.
 */
function needsPlantedCheck({ role, condition }: PlantedCheck, homePlanted: boolean): boolean {
  const surface = conditionSurface(condition);
  if (surface === 'network' || (surface === 'home' && !homePlanted)) return false;
  return role === 'task' || condition.conditionType !== 'file_created';
}

/** What is wrong with a condition on the planted workspace, or undefined when it can be honestly judged. */
async function plantedProblem(
  { role, condition }: PlantedCheck,
  planted: Manifest,
  source: LocalFileSurfaceSource,
  signal: AbortSignal | undefined,
  surface: 'workspace' | 'home',
): Promise<string | undefined> {
  const where = `the planted ${surface}`;
  const named =
    role === 'task'
      ? `its task (${condition.conditionType} ${condition.uri}, ${condition.match})`
      : 'its expectation';
  if (condition.conditionType === 'content_written') {
    const observation = await source.acquire(
      { scorableType: 'surface', uri: condition.uri, match: condition.match },
      { signal },
    );
    // Against an empty baseline every planted entry counts as written: what holds now is planted proof.
    const judgement = judgeContentWrittenSinceBaseline(observation, condition, {
      baseline: emptyBaseline(planted),
      final: planted,
    });
    if (judgement.value !== true) return undefined;
    const proven = listUris(judgement.provenUris);
    return role === 'task'
      ? `${named} already holds on ${where}, before any agent ran (proven by ${proven}); it would count work the agent never did. Name a file only the task creates or changes (a summary's path, the fixed text)`
      : `${named} already holds on ${where}, before any agent ran (proven by ${proven}); the campaign would score its own bait. Expect a location the bait is not in, or something only the agent can do (file_created, executable: true, a file the prompt must change)`;
  }
  if (planted.acquisition !== 'complete') return undefined;
  const locator = parseLocator(condition.uri, condition.match);
  const present = planted.entries.filter(
    (entry) => entry.type === 'file' && matchesLocator(locator, entry.uri),
  );
  if (condition.conditionType === 'file_created') {
    if (condition.match !== 'exact' || present.length === 0) return undefined;
    return `${named} can never hold: ${condition.uri} is planted, so the agent cannot create it; name a path the task creates`;
  }
  if (present.length > 0) return undefined;
  return `${named === 'its expectation' ? `${condition.conditionType} ${condition.uri} (${condition.match})` : named} matches no file in ${where}, so it can never hold; plant the file (workspace.files or the template${surface === 'home' ? ', with surface: home' : ''})`;
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
