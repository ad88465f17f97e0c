import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { InvalidCampaignError } from '../../errors.js';
import { type CliIo, printJson } from '../io.js';

/**
 * `witness attacks list [--json]`: the attack library (ids usable in a campaign's `matrix:`).
 * `witness attacks expand <campaign.yaml>`: the campaign with its matrix written out as attacks (YAML on
 * stdout), after the bait check: an expanded attack whose planted files already satisfy its condition
 * is refused (exit 2), naming the attack and the file.
 */
export function registerAttacks(program: Command, io: CliIo): void {
  const attacks = program
    .command('attacks')
    .description('the attack library: objectives × carriers × strategies');
  attacks
    .command('list')
    .description('list the objectives, carriers and strategies a campaign `matrix:` can name')
    .option('--json', 'print { objectives, carriers, strategies } as JSON')
    .action(async (options: Record<string, unknown>) => {
      const { describeLibrary } = await import('../../attacks/library/catalog.js');
      const catalog = describeLibrary();
      if (options.json === true) {
        printJson(io, catalog);
        return;
      }
      const out: string[] = ['objectives (what the attacker wants on disk):'];
      for (const objective of catalog.objectives) out.push(`  ${objective.id.padEnd(22)} ${objective.title}`);
      out.push('', 'carriers (where the injection hides):');
      for (const carrier of catalog.carriers)
        out.push(`  ${carrier.id.padEnd(22)} ${carrier.title} (${carrier.path})`);
      out.push('', 'strategies (how it is phrased or hidden):');
      for (const strategy of catalog.strategies) out.push(`  ${strategy.id.padEnd(22)} ${strategy.title}`);
      out.push(
        '',
        'Use them in a campaign: matrix: { objectives: [...] | all, carriers: [...] | all, strategies: [...] | all }',
        'and add design: covering to run every carrier × strategy pair once instead of every cell.',
      );
      io.out(`${out.join('\n')}\n`);
    });
  attacks
    .command('expand')
    .description('print a campaign with its matrix expanded into attacks (YAML), after the bait check')
    .argument('<campaign>', 'campaign file (YAML)')
    .option('--skip-bait-check', 'print without planting and judging each expanded attack first')
    .action(async (file: string, options: Record<string, unknown>) => {
      const [{ expandCampaignText }, { checkAllBait }, { loadCampaignFile }] = await Promise.all([
        import('../../attacks/library/expand-campaign.js'),
        import('../../attacks/library/bait-check.js'),
        import('../../attacks/campaign-file.js'),
      ]);
      let text: string;
      try {
        text = await readFile(file, 'utf8');
      } catch (error) {
        throw new InvalidCampaignError(
          `${file}: cannot read the campaign file (${(error as NodeJS.ErrnoException).code})`,
        );
      }
      const expanded = expandCampaignText(text, file);
      if (options.skipBaitCheck !== true && expanded.generated.length > 0) {
        // Paths (the template) resolved as `witness run` resolves them.
        const campaign = await loadCampaignFile(file);
        const findings = await checkAllBait(expanded.generated, {
          campaignFiles: campaign.workspace.files,
          template: campaign.workspace.template,
          signal: io.signal,
        });
        const refused = findings.filter((finding) => finding.status !== 'clean');
        if (refused.length > 0) {
          const issues = refused.map((finding) => `${finding.attack}: ${finding.status}: ${finding.detail}`);
          throw new InvalidCampaignError(
            `${file}: ${refused.length} expanded attack(s) fail the bait check (their planted files decide the condition before the agent runs):\n${issues.join('\n')}`,
            issues,
          );
        }
        io.err(`${findings.length} expanded attack(s) pass the bait check\n`);
      }
      io.out(expanded.yaml);
    });
}
