import { listCarriers } from './carriers.js';
import { unsupportedExpect } from './matrix.js';
import type { LibraryExpect } from './objectives.js';
import { listObjectives } from './objectives.js';
import { listStrategies } from './strategies.js';

/**
 * The library as data, for `witness attacks list [--json]`: every id usable in `matrix:`, with what it
 * is. `available: false` marks an objective whose `expect:` this build cannot judge yet (it needs the
 * change conditions of issue 11); `requires` says why.
 */
export interface LibraryCatalog {
  objectives: Array<{
    id: string;
    title: string;
    harm: string;
    expect: LibraryExpect;
    available: boolean;
    requires: string[];
  }>;
  carriers: Array<{ id: string; title: string; path: string; prompt: string; reaches: string }>;
  strategies: Array<{ id: string; title: string; description: string }>;
}

export function describeLibrary(): LibraryCatalog {
  return {
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
  };
}
