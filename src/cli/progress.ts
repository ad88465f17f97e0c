import type { ProgressEvent } from '../attacks/run-campaign.js';
import { neutralizeText } from '../text/quote-text.js';
import type { CliIo } from './io.js';

/**
 * Progress on stderr: a redrawn bar on a terminal, one plain line per finished attempt otherwise (so logs
 * and CI output stay readable). Attack text is never echoed here; only ids and outcomes.
 */
export function progressReporter(
  io: CliIo,
  rawLabel: string,
): { update(event: ProgressEvent): void; done(): void } {
  let drawn = false;
  // The campaign's name comes from a file someone else may have written.
  const label = neutralizeText(rawLabel, { maxChars: 60 });
  return {
    update(event) {
      const { completed, total, record } = event;
      if (io.errIsTTY === true) {
        const width = 24;
        const filled = Math.round((completed / total) * width);
        io.err(
          `\r${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${completed}/${total} ${neutralizeText(record.attack, { maxChars: 60 })} ${record.outcome}\x1b[K`,
        );
        drawn = true;
      } else {
        io.err(
          `${label}: ${completed}/${total} ${neutralizeText(record.attack, { maxChars: 60 })} #${record.attempt} ${record.outcome}\n`,
        );
      }
    },
    done() {
      if (drawn) io.err('\n');
    },
  };
}
