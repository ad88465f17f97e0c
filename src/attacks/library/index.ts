/**
 * The attack library: objectives (what the attacker wants on disk, with the condition that proves it),
 * carriers (where the injection hides), strategies (how it is phrased or hidden) and the `matrix:` that
 * expands them into campaign attacks. This file is the library's complete public surface.
 */
export {
  BAIT_STATUSES,
  type BaitCandidate,
  type BaitCheckOptions,
  type BaitFinding,
  type BaitStatus,
  checkAllBait,
  checkBait,
} from './bait-check.js';
export { type Carrier, getCarrier, listCarriers } from './carriers.js';
export { describeLibrary, type LibraryCatalog, LibraryCatalogSchema } from './catalog.js';
export {
  decodeBase64,
  decodeHomoglyphs,
  decodeUnicodeTags,
  decodeZeroWidth,
  encodeBase64,
  encodeHomoglyphs,
  encodeUnicodeTags,
  encodeZeroWidth,
} from './encodings.js';
export { type ExpandedCampaign, expandCampaignText } from './expand-campaign.js';
export { type Injection, type InjectionAction, renderInstruction } from './injection.js';
export {
  type GroupableAttempt,
  groupByLibrary,
  LIBRARY_AXES,
  type LibraryAxis,
  type LibraryGroup,
  libraryRefOf,
} from './library-groups.js';
export {
  CARRIER_IDS,
  type CarrierId,
  type LibraryRef,
  LibraryRefSchema,
  libraryAttackId,
  OBJECTIVE_IDS,
  type ObjectiveId,
  STRATEGY_IDS,
  type StrategyId,
} from './library-ids.js';
export {
  buildLibraryAttack,
  expandCampaignMatrix,
  expandMatrix,
  type LibraryAttack,
  type Matrix,
  type MatrixExpansion,
  type MatrixInput,
  MatrixSchema,
} from './matrix.js';
export { designCells, MATRIX_DESIGNS, type MatrixAxes, type MatrixDesign } from './matrix-design.js';
export {
  getObjective,
  type LibraryExpect,
  listObjectives,
  type Objective,
  PLANTED_SECRET,
} from './objectives.js';
export {
  getStrategy,
  listStrategies,
  SPLIT_FILE_PATH,
  type Strategy,
  type StrategyOutput,
} from './strategies.js';
