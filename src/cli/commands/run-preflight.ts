import type { Campaign } from '../../attacks/campaign.js';
import { PreflightFailedError } from '../../errors.js';
import type { CliIo } from '../io.js';
import { renderDryRun, renderPreflightFailure } from '../render-preflight.js';

/**
 * The preflight as `witness run` uses it: load the campaign, check it (unless `--no-preflight`), and
 * refuse it with every problem at once (exit 2); `--dry-run` stops there and prints the checks and the
 * plan. Loaded when the command runs.
 */

/** The campaign, loaded and (with `preflight`) checked; a {@link PreflightFailedError} when it fails. */
export async function loadCheckedCampaign(
  file: string,
  options: { preflight: boolean; db: string },
  io: CliIo,
): Promise<Campaign> {
  const { loadCampaignFile } = await import('../../attacks/campaign-file.js');
  const campaign = await loadCampaignFile(file);
  if (!options.preflight) return campaign;
  const { preflightCampaign } = await import('../../attacks/preflight/campaign-preflight.js');
  const result = await preflightCampaign(campaign, {
    campaignFile: file,
    hostEnv: io.env,
    memoryLocation: options.db,
    signal: io.signal,
  });
  if (!result.ok) throw new PreflightFailedError(renderPreflightFailure(file, result.checks), result.checks);
  return campaign;
}

/** `witness run --dry-run`: the preflight with the bait check, and the plan; no attempt runs. */
export async function dryRunCampaign(
  file: string,
  options: { db: string; json: boolean; concurrency: number | undefined },
  io: CliIo,
): Promise<void> {
  const [{ loadCampaignFile }, { preflightCampaign }, { planCampaign }, { DryRunReportSchema }] =
    await Promise.all([
      import('../../attacks/campaign-file.js'),
      import('../../attacks/preflight/campaign-preflight.js'),
      import('../../attacks/preflight/campaign-plan.js'),
      import('../../attacks/preflight/preflight-report.js'),
    ]);
  const loaded = await loadCampaignFile(file);
  const campaign =
    options.concurrency === undefined ? loaded : { ...loaded, concurrency: options.concurrency };
  const result = await preflightCampaign(campaign, {
    campaignFile: file,
    hostEnv: io.env,
    memoryLocation: options.db,
    bait: true,
    signal: io.signal,
  });
  if (!result.ok) throw new PreflightFailedError(renderPreflightFailure(file, result.checks), result.checks);
  const plan = planCampaign(campaign, result);
  if (options.json) {
    const report = DryRunReportSchema.parse({ schemaVersion: 1, ok: result.ok, checks: result.checks, plan });
    io.out(`${JSON.stringify(report)}\n`);
    return;
  }
  io.out(`${renderDryRun(file, result.checks, plan)}\n`);
}
