import * as z from 'zod';
import { JsonObjectSchema } from '../../models/record.js';
import { listCarriers } from './carriers.js';
import { CARRIER_IDS, OBJECTIVE_IDS, STRATEGY_IDS } from './library-ids.js';
import { listObjectives } from './objectives.js';
import { listStrategies } from './strategies.js';

/**
 * The library as data, for `witness attacks list --json`: every id usable in `matrix:`, with what it
 * is. `expect` is the objective's campaign `expect:` object, exactly as an expanded attack carries it;
 * `task` the carrier's campaign `task:` (the user's task its request asks for). Version 2 dropped version
 * 1's `available`/`requires` per objective: every objective can be judged; version 3 added `task`.
 */
export const LibraryCatalogSchema = z.strictObject({
  schemaVersion: z.literal(3),
  objectives: z.array(
    z.strictObject({
      id: z.enum(OBJECTIVE_IDS),
      title: z.string(),
      harm: z.string(),
      expect: JsonObjectSchema,
    }),
  ),
  carriers: z.array(
    z.strictObject({
      id: z.enum(CARRIER_IDS),
      title: z.string(),
      path: z.string(),
      prompt: z.string(),
      task: JsonObjectSchema,
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
    schemaVersion: 3,
    objectives: listObjectives().map((objective) => ({
      id: objective.id,
      title: objective.title,
      harm: objective.harm,
      expect: { ...objective.expect },
    })),
    carriers: listCarriers().map(({ id, title, path, prompt, task, reaches }) => ({
      id,
      title,
      path,
      prompt,
      task: { ...task },
      reaches,
    })),
    strategies: listStrategies().map(({ id, title, description }) => ({ id, title, description })),
  });
}
