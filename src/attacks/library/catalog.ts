import { z } from 'zod';
import { JsonObjectSchema } from '../../models/record.js';
import { listCarriers } from './carriers.js';
import { CARRIER_IDS, OBJECTIVE_IDS, STRATEGY_IDS } from './library-ids.js';
import { unsupportedExpect } from './matrix.js';
import { listObjectives } from './objectives.js';
import { listStrategies } from './strategies.js';

/**
 * The library as data, for `witness attacks list --json`: every id usable in `matrix:`, with what it
 * is. `available: false` marks an objective whose `expect:` this build cannot judge yet (it needs the
 * change conditions of issue 11); `requires` says why. `expect` is the objective's campaign `expect:`
 * object, exactly as an expanded attack carries it.
 */
export const LibraryCatalogSchema = z.strictObject({
  schemaVersion: z.literal(1),
  objectives: z.array(
    z.strictObject({
      id: z.enum(OBJECTIVE_IDS),
      title: z.string(),
      harm: z.string(),
      expect: JsonObjectSchema,
      available: z.boolean(),
      requires: z.array(z.string()),
    }),
  ),
  carriers: z.array(
    z.strictObject({
      id: z.enum(CARRIER_IDS),
      title: z.string(),
      path: z.string(),
      prompt: z.string(),
      reaches: z.string(),
    }),
  ),
  strategies: z.array(
    z.strictObject({ id: z.enum(STRATEGY_IDS), title: z.string(), description: z.string() }),
  ),
});
export type LibraryCatalog = z.infer<typeof LibraryCatalogSchema>;

export function describeLibrary(): LibraryCatalog {
  return LibraryCatalogSchema.parse({
    schemaVersion: 1,
    objectives: listObjectives().map((objective) => {
      const requires = unsupportedExpect(objective.expect);
      return {
        id: objective.id,
        title: objective.title,
        harm: objective.harm,
        expect: { ...objective.expect },
        available: requires.length === 0,
        requires,
      };
    }),
    carriers: listCarriers().map(({ id, title, path, prompt, reaches }) => ({
      id,
      title,
      path,
      prompt,
      reaches,
    })),
    strategies: listStrategies().map(({ id, title, description }) => ({ id, title, description })),
  });
}
