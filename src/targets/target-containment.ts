import type { Containment } from '../models/vocabulary.js';
import { resolveSandboxSettings, type SandboxSettings } from '../sandbox/sandbox-settings.js';

/**
 * The containment of a target that starts processes (a command agent, an agent preset's CLI, an MCP
 * server): the run's sandbox settings when the campaign resolved them, otherwise bubblewrap, detected at
 * first use and refused with a `SandboxUnavailableError` when it cannot be had. Running uncontained is
 * never a silent default: only settings that say `sandbox: none` give it.
 */
export class TargetContainment {
  readonly #hostEnv: Readonly<Record<string, string | undefined>>;
  readonly #what: string;
  readonly #mode: Containment;
  #settings: Promise<SandboxSettings> | undefined;

  /**
   * @param given the run's settings, when a campaign resolved them
   * @param hostEnv Witness's environment, read only through the sandbox's allowlist
   * @param what what needs the sandbox, for the refusal message (`a command target`)
   */
  constructor(
    given: SandboxSettings | undefined,
    hostEnv: Readonly<Record<string, string | undefined>> | undefined,
    what: string,
  ) {
    this.#hostEnv = hostEnv ?? {};
    this.#what = what;
    this.#mode = given?.containment.mode ?? 'bwrap';
    if (given !== undefined) this.#settings = Promise.resolve(given);
  }

  /** What attempts record: the given settings' mode, else `bwrap` (required when nothing was given). */
  mode(): Containment {
    return this.#mode;
  }

  /** The settings to launch with; resolved once, on first use, when none were given. */
  settings(): Promise<SandboxSettings> {
    this.#settings ??= resolveSandboxSettings({ hostEnv: this.#hostEnv, what: this.#what });
    return this.#settings;
  }
}
