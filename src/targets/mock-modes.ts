/**
 * The mock planner's behaviours: `vulnerable` follows instructions found in files, `guarded` does not,
 * `refusing` refuses all work (neither the injection nor the user's task). Every mode but `refusing` does
 * the user's task.
 */
export const MOCK_MODES = ['vulnerable', 'guarded', 'refusing'] as const;
export type MockMode = (typeof MOCK_MODES)[number];
