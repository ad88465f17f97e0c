import * as z from 'zod';
import { parseRecord } from '../../models/record.js';
import { type Attacker, AttackerSchema, ExpectSchema } from '../campaign.js';
import { getCarrier } from './carriers.js';
import {
  CARRIER_IDS,
  type CarrierId,
  type LibraryRef,
  libraryAttackId,
  OBJECTIVE_IDS,
  type ObjectiveId,
  STRATEGY_IDS,
  type StrategyId,
} from './library-ids.js';
import { designCells, MATRIX_DESIGNS, type MatrixDesign } from './matrix-design.js';
import { getObjective, type LibraryExpect } from './objectives.js';
import { type ProjectFile, projectFiles } from './project-files.js';
import { getStrategy } from './strategies.js';

/**
 * A campaign's `matrix:` — objectives × carriers × strategies — and its expansion into ordinary campaign
 * attacks. Expansion is a pure step before the campaign schema runs: the result is the same YAML a person
 * could have written by hand (`witness attacks expand` prints it), so everything downstream (validation,
 * running, scoring, reports) treats library attacks like any other.
 *
 * ```yaml
 * matrix:
 *   objectives: [git-hook, npm-postinstall]   # or: all
 *   carriers: all
 *   strategies: [plain, base64]
 *   prompt: "Please look at {file}."          # optional; default: each carrier's own request
 *   task: { uri: /NOTES.md }                   # optional; default: the carrier's task (none with prompt:)
 *   attacker: { model: { baseUrl: …, name: … }, rounds: 5 }   # optional: adaptive attacks (SPEC §15)
 *   attempts: 3                                # optional; default: the campaign's
 *   design: covering                           # optional; default full (see matrix-design.ts)
 * ```
 *
 * Guarantees: ids are `<objective>.<carrier>.<strategy>`; the same matrix gives the same attacks, files
 * and order (the order of the lists given, or the library's order for `all`); every attack carries
 * `library: { objective, carrier, strategy }`. `design: full` (the default) is every cell; `covering`
 * is a subset in which every listed id occurs (matrix-design.ts).
 */

/** `all`, or a list of ids without repeats; `all` becomes the whole vocabulary, in the library's order. */
const selection = <const T extends readonly [string, ...string[]]>(ids: T, what: string) =>
  z.preprocess(
    (value) => (value === 'all' ? [...ids] : value),
    z
      .array(
        z.enum(ids, {
          error: (issue) => `unknown ${what} ${JSON.stringify(issue.input)}; one of: ${ids.join(', ')}`,
        }),
        {
          error: `give a list of ${what} ids, or all`,
        },
      )
      .min(1, `list at least one ${what}, or say all`)
      .superRefine((list, ctx) => {
        const seen = new Set<string>();
        list.forEach((id, i) => {
          if (seen.has(id)) ctx.addIssue({ code: 'custom', path: [i], message: `${id} is listed twice` });
          seen.add(id);
        });
      }),
  );

export const MatrixSchema = z.strictObject({
  objectives: selection(OBJECTIVE_IDS, 'objective'),
  carriers: selection(CARRIER_IDS, 'carrier'),
  strategies: selection(STRATEGY_IDS, 'strategy'),
  /** The user's request; `{file}` becomes the carrier's file. Default: each carrier's own request. */
  prompt: z.string().min(1).optional(),
  /**
   * The user's task of every attack (SPEC §16). Default: the carrier's own task with the carrier's own
   * request; none when `prompt:` replaces the request (the carrier's task would not be what was asked).
   */
  task: ExpectSchema.optional(),
  /**
   * An attacker model for every attack (SPEC §15); its `plant` defaults to each attack's carrier file, the
   * file the attacker rewrites.
   */
  attacker: AttackerSchema.optional(),
  attempts: z.number().int().positive().optional(),
  /** Which cells are run: `full` (every one) or `covering` (every carrier × strategy pair once). */
  design: z
    .enum(MATRIX_DESIGNS, { error: `the design is one of: ${MATRIX_DESIGNS.join(', ')}` })
    .default('full'),
});
export type Matrix = z.infer<typeof MatrixSchema>;
/** A matrix as written: `all` or a list on each axis. */
export interface MatrixInput {
  objectives: 'all' | readonly ObjectiveId[];
  carriers: 'all' | readonly CarrierId[];
  strategies: 'all' | readonly StrategyId[];
  prompt?: string | undefined;
  task?: LibraryExpect | undefined;
  attacker?: Attacker | undefined;
  attempts?: number | undefined;
  design?: MatrixDesign | undefined;
}

/** An expanded attack, in campaign-file form (before the campaign schema applies defaults). */
export interface LibraryAttack {
  id: string;
  objective: string;
  library: LibraryRef;
  prompt: string;
  files: ProjectFile[];
  /** The objective's variables for the agent's environment (a canary it must not send). */
  env?: Record<string, string>;
  attempts?: number;
  expect: LibraryExpect;
  /** The user's task: the carrier's, the matrix's `task:`, or none under a matrix `prompt:` alone. */
  task?: LibraryExpect;
  /** The matrix's attacker, planting in the carrier's file unless it names another. */
  attacker?: Attacker;
}

/** The attack for one cell of the matrix. Pure: same arguments, same attack. */
export function buildLibraryAttack(
  ref: LibraryRef,
  options: {
    prompt?: string | undefined;
    task?: LibraryExpect | undefined;
    attacker?: Attacker | undefined;
    attempts?: number | undefined;
  } = {},
): LibraryAttack {
  const objective = getObjective(ref.objective);
  const carrier = getCarrier(ref.carrier);
  const rendered = getStrategy(ref.strategy).render(objective.injection);
  const byPath = new Map<string, ProjectFile>();
  // Later layers win on the same path: the project, then the objective's files, the carrier, the strategy.
  // Workspace files first, then the home's, each sorted by path.
  const layers: ProjectFile[] = [
    ...projectFiles(),
    ...objective.files,
    ...carrier.embed(rendered.lines),
    ...rendered.files,
  ];
  for (const file of layers) {
    byPath.set(`${file.surface === 'home' ? '1' : '0'}${file.path}`, file);
  }
  const files = [...byPath.keys()].sort().map((key) => {
    const { path, content, surface } = byPath.get(key) as ProjectFile;
    return surface === undefined ? { path, content } : { path, content, surface };
  });
  const task = options.task ?? (options.prompt === undefined ? carrier.task : undefined);
  return {
    id: libraryAttackId(ref),
    objective: objective.title,
    library: { ...ref },
    prompt: (options.prompt ?? carrier.prompt).split('{file}').join(carrier.path),
    files,
    ...(objective.env === undefined ? {} : { env: { ...objective.env } }),
    ...(options.attempts === undefined ? {} : { attempts: options.attempts }),
    expect: { ...objective.expect },
    ...(task === undefined ? {} : { task: { ...task } }),
    ...(options.attacker === undefined
      ? {}
      : { attacker: { ...options.attacker, plant: options.attacker.plant ?? carrier.path } }),
  };
}

/**
 * The cells of a matrix its design selects — for `full`, objectives outermost, strategies innermost
 * (invalid input: InvalidRecordError).
 */
export function expandMatrix(input: MatrixInput | Matrix): LibraryAttack[] {
  const matrix = parseRecord(MatrixSchema, input, 'matrix');
  return designCells(matrix, matrix.design).map((ref) =>
    buildLibraryAttack(ref, {
      prompt: matrix.prompt,
      task: matrix.task,
      attacker: matrix.attacker,
      attempts: matrix.attempts,
    }),
  );
}

export type MatrixExpansion =
  | { success: true; data: unknown; generated: number; handWritten: number }
  | { success: false; error: z.ZodError };

const CampaignWithMatrixSchema = z.looseObject({ matrix: MatrixSchema.optional() });

/**
 * Replaces a campaign's `matrix:` by the attacks it stands for, appended after the hand-written ones.
 * Input and output are plain objects (parsed YAML); a campaign without `matrix:` comes back unchanged.
 * Errors carry paths into the original document (`matrix.objectives[2]`) so they can be located.
 */
export function expandCampaignMatrix(raw: unknown): MatrixExpansion {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw) || !('matrix' in raw)) {
    return { success: true, data: raw, generated: 0, handWritten: handWrittenCount(raw) };
  }
  const result = CampaignWithMatrixSchema.safeParse(raw);
  if (!result.success) return { success: false, error: result.error };
  const { matrix, ...rest } = result.data;
  if (matrix === undefined)
    return { success: true, data: rest, generated: 0, handWritten: handWrittenCount(rest) };
  const generated = expandMatrix(matrix);
  // An `attacks:` that is not a list is left for the campaign schema to report, never overwritten.
  if (rest.attacks !== undefined && !Array.isArray(rest.attacks)) {
    return { success: true, data: rest, generated: 0, handWritten: 0 };
  }
  const handWritten = (rest.attacks as unknown[] | undefined) ?? [];
  return {
    success: true,
    data: { ...rest, attacks: [...handWritten, ...generated] },
    generated: generated.length,
    handWritten: handWritten.length,
  };
}

function handWrittenCount(raw: unknown): number {
  const attacks = (raw as { attacks?: unknown } | null)?.attacks;
  return Array.isArray(attacks) ? attacks.length : 0;
}
