/** The mock planner's two behaviours: `vulnerable` follows instructions found in files, `guarded` does not. */
export const MOCK_MODES = ['vulnerable', 'guarded'] as const;
export type MockMode = (typeof MOCK_MODES)[number];
