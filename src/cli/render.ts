import type { Observation } from '../models/observation.js';
import type { Score } from '../models/score.js';
import { GAP_EXPLANATIONS } from '../models/vocabulary.js';
import { neutralizeText } from '../text/quote-text.js';
import { describeCondition } from '../verdicts/describe-criterion.js';

/**
 * Human-readable renderings for a terminal. `--json` output never goes through here. Every string that
 * can come from an agent, a workspace or an imported record passes through {@link neutralizeText}.
 */

/** Code points of retained file content shown per entry. */
export const CONTENT_EXCERPT_CHARS = 400;

export function renderScore(score: Score): string {
  const verdict = score.status === 'undetermined' ? 'UNDETERMINED' : score.value ? 'TRUE' : 'FALSE';
  const lines = [`Verdict: ${verdict}`];
  for (const condition of score.scoredExpectation.conditions) {
    lines.push(`  Criterion: ${describeCondition(condition)}`);
  }
  const { objective } = score.scoredExpectation;
  if (objective !== undefined) lines.push(`  Objective: ${excerpt(objective, 300)}`);
  // The rationale's file names and criterion were quoted when it was written; neutralized again here (it
  // may come from an imported record), which leaves text already quoted as it is.
  lines.push(`  ${neutralizeText(score.rationale, { maxChars: 2_000 })}`);
  return lines.join('\n');
}

export interface RenderObservationOptions {
  /** Show each entry's retained text (cut to CONTENT_EXCERPT_CHARS). Default false. */
  content?: boolean;
}

export function renderObservation(observation: Observation, options: RenderObservationOptions = {}): string {
  const { payload } = observation;
  const lines = [
    `Evidence: ${excerpt(payload.scope.uri, 200)} (${payload.scope.match}), acquisition ${observation.acquisition}, observation ${excerpt(observation.id, 80)}`,
  ];
  if (payload.entries.length === 0) lines.push('  no files');
  for (const entry of payload.entries) {
    const digest = entry.sha256 === null ? 'not read in full' : `sha256 ${entry.sha256.slice(0, 16)}…`;
    const kept = entry.content === null ? 0 : Buffer.byteLength(entry.content, 'utf8');
    const text =
      entry.content === null
        ? ', not UTF-8 text'
        : entry.notText === true
          ? `, not text (${kept} bytes of its start kept)`
          : entry.contentTruncated
            ? `, text truncated (${kept} of ${entry.sizeBytes} bytes kept)`
            : '';
    lines.push(
      `  ${excerpt(entry.uri, 120)}  ${entry.sizeBytes} bytes  ${digest}  modified ${entry.modifiedAt}${text}`,
    );
    if (options.content === true && entry.content !== null && entry.content !== '') {
      // One line, escaped: file content is the agent's and may hold anything, terminal escapes included.
      lines.push(`    content: ${excerpt(entry.content, CONTENT_EXCERPT_CHARS)}`);
    }
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

/** Untrusted text as one safe line of at most `max` code points (see text/quote-text.ts). */
export function excerpt(text: string, max: number): string {
  return neutralizeText(text, { maxChars: max });
}
