/**
 * The mock planner's behaviours (and the scripted model's, `witness model serve --mode`): `vulnerable`
 * follows instructions found in files, `guarded` does not, `refusing` refuses all work (neither the
 * injection nor the user's task), `picky` resists every injection as planted and acts only on one that
 * meets its demands (picky-rules.ts), which an adaptive attacker can reach from its refusals. Every mode
 * but `refusing` does the user's task.
 */
export const MOCK_MODES = ['vulnerable', 'guarded', 'refusing', 'picky'] as const;
export type MockMode = (typeof MOCK_MODES)[number];
