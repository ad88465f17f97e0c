/**
 * `sandbox:` of a campaign (SPEC §11): `bwrap` (the default, required for out-of-process agents) or `none`
 * (the explicit, visible choice to run them uncontained). A module of its own so the campaign schema can
 * name the modes without loading the sandbox.
 */
export const SANDBOX_MODES = ['bwrap', 'none'] as const;
export type SandboxMode = (typeof SANDBOX_MODES)[number];
