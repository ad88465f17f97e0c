/**
 * Writes the JSON Schema of each wire-format record (SPEC §3) to `schemas/`, generated from the zod
 * schemas so the two can never disagree. Run with `npm run schemas`; `test/schemas.test.ts` fails when the
 * committed files are out of date.
 *
 * The schemas describe the records as Witness writes them (zod `io: 'output'`): every defaulted field
 * (a scorable's `match`, a matcher's `caseSensitive` and `ignoreWhitespace`) is required. Witness also
 * reads records that omit those fields, so anything valid here is accepted on read. Cross-field
 * invariants (sorted unique entries, value null exactly when undetermined, ...) are enforced by the zod
 * schemas on read and cannot be expressed here.
 */

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as z from 'zod';
import { ChangeSetSchema, SurfaceChangesSchema } from '../src/models/change-set.js';
import { ComponentIdentifierSchema } from '../src/models/identifier.js';
import { ManifestSchema } from '../src/models/manifest.js';
import { NetworkEvidenceSchema } from '../src/models/network-evidence.js';
import { ObservationSchema } from '../src/models/observation.js';
import { JsonValueSchema } from '../src/models/record.js';
import { ScoreSchema } from '../src/models/score.js';

interface SchemaFile {
  fileName: string;
  title: string;
  description: string;
  schema: z.ZodType;
}

export const SCHEMA_FILES: readonly SchemaFile[] = [
  {
    fileName: 'observation.schema.json',
    title: 'Witness Observation',
    description: 'The immutable evidence a source returned for a surface scorable (schemaVersion 1).',
    schema: ObservationSchema,
  },
  {
    fileName: 'score.schema.json',
    title: 'Witness Score',
    description: 'A true_false verdict: complete with a boolean value, or undetermined with null.',
    schema: ScoreSchema,
  },
  {
    fileName: 'manifest.schema.json',
    title: 'Witness Manifest',
    description:
      'Every entry of a surface (uri, type, size, sha256, mode, link target) at one moment, with its coverage (schemaVersion 1).',
    schema: ManifestSchema,
  },
  {
    fileName: 'change-set.schema.json',
    title: 'Witness ChangeSet',
    description:
      'What changed between a baseline and a final manifest of one surface: created, modified, deleted, mode_changed (schemaVersion 1).',
    schema: ChangeSetSchema,
  },
  {
    fileName: 'attempt-changes.schema.json',
    title: 'Witness AttemptChanges',
    description:
      "The change evidence stored with an attempt for one surface: both manifests and their change set (each entry of an attempt's `changes`).",
    schema: SurfaceChangesSchema,
  },
  {
    fileName: 'network-evidence.schema.json',
    title: 'Witness NetworkEvidence',
    description:
      "What an attempt sent (SPEC §14): one entry per request its egress proxy saw, with coverage gaps (an attempt's `network`).",
    schema: NetworkEvidenceSchema,
  },
];

/** Shared recursive definitions, named instead of zod's generated `__schema0`. */
function definitions() {
  const registry = z.registry<{ id: string; description?: string }>();
  registry.add(ComponentIdentifierSchema, {
    id: 'ComponentIdentifier',
    description: 'A source or scorer, named by type, version and its non-secret configuration.',
  });
  registry.add(JsonValueSchema, { id: 'JsonValue' });
  return registry;
}

/** The file contents: pretty JSON with a trailing newline, the same bytes for the same zod schemas. */
export function renderSchemas(): Map<string, string> {
  const rendered = new Map<string, string>();
  for (const file of SCHEMA_FILES) {
    const generated = z.toJSONSchema(file.schema, { io: 'output', metadata: definitions() });
    const { $schema, ...rest } = generated;
    const document = { $schema, title: file.title, description: file.description, ...rest };
    rendered.set(file.fileName, `${JSON.stringify(document, null, 2)}\n`);
  }
  return rendered;
}

/** `schemas/` at the repository root (this file runs as `dist/scripts/generate-schemas.js`). */
export const SCHEMAS_DIR = fileURLToPath(new URL('../../schemas/', import.meta.url));

function main(): void {
  mkdirSync(SCHEMAS_DIR, { recursive: true });
  for (const [fileName, text] of renderSchemas()) {
    writeFileSync(join(SCHEMAS_DIR, fileName), text);
    process.stderr.write(`wrote schemas/${fileName}\n`);
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) main();
