/** The CLI's version, in one place: `witness --version` prints it without loading any command. */
export const WITNESS_VERSION = '0.1.0';

/** True for exactly `witness --version` / `witness -V`, answered before the command tree is loaded. */
export function isVersionRequest(args: readonly string[]): boolean {
  return args.length === 1 && (args[0] === '--version' || args[0] === '-V');
}

/** True for `witness score …` and `witness observe …`, which acquire evidence as soon as they start. */
export function acquiresAtOnce(args: readonly string[]): boolean {
  return args[0] === 'score' || args[0] === 'observe';
}

/**
 * True for `witness score …`: the command run-witness.ts serves by the score command's module alone, which
 * main.ts loads as one graph (score-process.ts) without the rest of the command tree.
 */
export function runsScoreAlone(args: readonly string[]): boolean {
  return args[0] === 'score';
}
