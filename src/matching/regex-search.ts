import vm from 'node:vm';
import { InvalidOptionError } from '../errors.js';

/**
 * Runs a regex search with a wall-clock bound. File text is attacker-controlled: a catastrophic pattern
 * meeting crafted text must end in a timeout (judged undetermined), never hang the scorer. V8 honours
 * the vm timeout inside the regex engine's backtracking, so the search is stopped where it stands.
 */

const script = new vm.Script('pattern.test(text)');
const context = vm.createContext({ pattern: /(?:)/, text: '' });

export type SearchOutcome = 'match' | 'no_match' | 'timeout';

/** The largest timeout node:vm accepts (an unsigned 32-bit number of milliseconds). */
export const MAX_REGEX_TIMEOUT_MS = 2 ** 32 - 1;

/** Throws {@link InvalidOptionError} unless `timeoutMs` is a timeout node:vm can enforce. */
export function assertRegexTimeoutMs(timeoutMs: number): void {
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > MAX_REGEX_TIMEOUT_MS) {
    throw new InvalidOptionError(
      `regexTimeoutMs must be an integer from 1 to ${MAX_REGEX_TIMEOUT_MS} milliseconds, got ${String(timeoutMs)}`,
    );
  }
}

export function searchWithTimeout(pattern: RegExp, text: string, timeoutMs: number): SearchOutcome {
  assertRegexTimeoutMs(timeoutMs);
  context.pattern = pattern;
  context.text = text;
  pattern.lastIndex = 0;
  try {
    return script.runInContext(context, { timeout: timeoutMs }) === true ? 'match' : 'no_match';
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') return 'timeout';
    throw error;
  } finally {
    context.text = '';
  }
}
