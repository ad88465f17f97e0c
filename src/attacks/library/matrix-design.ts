import type { CarrierId, LibraryRef, ObjectiveId, StrategyId } from './library-ids.js';

/**
 * Which cells of a matrix are run. `full` is every objective × carrier × strategy. `covering` is for
 * targets too slow for the full product (a real agent takes seconds per attempt; the whole library is
 * 1,710 attacks): every carrier × strategy pair exactly once, with the objectives dealt round-robin over
 * those pairs, so every objective, every carrier and every strategy is exercised, and every way of hiding
 * an injection meets every place it can hide. When there are more objectives than pairs, the pairs are
 * dealt again until every objective has a cell.
 *
 * Guarantees: deterministic (the same lists give the same cells, in the same order: carriers outermost,
 * strategies innermost, as in `full`); no cell twice; every listed id appears at least once.
 */

export const MATRIX_DESIGNS = ['full', 'covering'] as const;
export type MatrixDesign = (typeof MATRIX_DESIGNS)[number];

export interface MatrixAxes {
  objectives: readonly ObjectiveId[];
  carriers: readonly CarrierId[];
  strategies: readonly StrategyId[];
}

/** The cells a design selects from the axes, in run order. */
export function designCells(axes: MatrixAxes, design: MatrixDesign): LibraryRef[] {
  const { objectives, carriers, strategies } = axes;
  if (design === 'full') {
    return objectives.flatMap((objective) =>
      carriers.flatMap((carrier) => strategies.map((strategy) => ({ objective, carrier, strategy }))),
    );
  }
  const pairs = carriers.length * strategies.length;
  const count = Math.max(pairs, objectives.length);
  const cells: LibraryRef[] = [];
  for (let k = 0; k < count; k++) {
    cells.push({
      objective: objectives[k % objectives.length] as ObjectiveId,
      carrier: carriers[Math.floor(k / strategies.length) % carriers.length] as CarrierId,
      strategy: strategies[k % strategies.length] as StrategyId,
    });
  }
  return cells;
}
