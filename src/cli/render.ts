import type { Observation } from '../models/observation.js';
import type { Score } from '../models/score.js';
import { GAP_EXPLANATIONS } from '../models/vocabulary.js';

/** Human-readable renderings for a terminal. `--json` output never goes through here. */

export function renderScore(score: Score): string {
  const verdict = score.status === 'undetermined' ? 'UNDETERMINED' : score.value ? 'TRUE' : 'FALSE';
  return [`Verdict: ${verdict}`, `  ${score.description}`, `  ${score.rationale}`].join('\n');
}

export function renderObservation(observation: Observation): string {
  const { payload } = observation;
  const lines = [
    `Evidence: ${payload.scope.uri} (${payload.scope.match}), acquisition ${observation.acquisition}, observation ${observation.id}`,
  ];
  if (payload.entries.length === 0) lines.push('  no files');
  for (const entry of payload.entries) {
    const digest = entry.sha256 === null ? 'not read in full' : `sha256 ${entry.sha256.slice(0, 16)}…`;
    const text =
      entry.content === null ? ', not UTF-8 text' : entry.contentTruncated ? ', text truncated' : '';
    lines.push(
      `  ${excerpt(entry.uri, 120)}  ${entry.sizeBytes} bytes  ${digest}  modified ${entry.modifiedAt}${text}`,
    );
  }
  if (payload.coverage.gaps.length > 0) {
    lines.push('Gaps (why the evidence is incomplete):');
    for (const gap of payload.coverage.gaps) {
      const where = gap.uri === undefined ? '' : ` at ${excerpt(gap.uri, 120)}`;
      const detail = gap.detail === undefined ? '' : ` (${excerpt(gap.detail, 160)})`;
      lines.push(`  ${gap.reason}${where}: ${GAP_EXPLANATIONS[gap.reason]}${detail}`);
    }
  }
  return lines.join('\n');
}

/** Workspace names are attacker-controlled: show at most `max` characters of one, escaped. */
export function excerpt(text: string, max: number): string {
  const printable = JSON.stringify(text).slice(1, -1);
  return printable.length <= max ? printable : `${printable.slice(0, max)}…`;
}
