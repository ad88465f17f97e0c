import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { renderSchemas, SCHEMA_FILES } from '../scripts/generate-schemas.js';

/** Tests run from the repository root, where the committed schemas live. */
const SCHEMAS_DIR = join(process.cwd(), 'schemas');

function committed(fileName: string): string {
  return readFileSync(join(SCHEMAS_DIR, fileName), 'utf8');
}

/** The committed schema, read as a function from a key path to the JSON found there. */
function schemaAt(fileName: string): (...path: string[]) => unknown {
  const document: unknown = JSON.parse(committed(fileName));
  return (...path) => {
    let node = document;
    for (const key of path) {
      assert.ok(node !== null && typeof node === 'object' && key in node, `no ${path.join('.')}`);
      node = (node as Record<string, unknown>)[key];
    }
    return node;
  };
}

describe('committed JSON Schemas', () => {
  for (const [fileName, text] of renderSchemas()) {
    it(`schemas/${fileName} matches the zod schema (run "npm run schemas" to update it)`, () => {
      assert.equal(committed(fileName), text);
    });
  }

  it('holds exactly the generated files, none stale', () => {
    const onDisk = readdirSync(SCHEMAS_DIR).filter((name) => name.endsWith('.json'));
    assert.deepEqual(onDisk.sort(), SCHEMA_FILES.map((file) => file.fileName).sort());
  });

  it('are rendered the same way every time', () => {
    assert.deepEqual(renderSchemas(), renderSchemas());
  });
});

describe('observation.schema.json', () => {
  const at = schemaAt('observation.schema.json');

  it('is a closed draft 2020-12 object schema requiring every observation field', () => {
    assert.equal(at('$schema'), 'https://json-schema.org/draft/2020-12/schema');
    assert.equal(at('additionalProperties'), false);
    assert.deepEqual(at('required'), [
      'id',
      'sourceIdentifier',
      'acquisition',
      'observedAt',
      'scorable',
      'payload',
      'metadata',
    ]);
  });

  it('pins schemaVersion to the number 1 and requires defaulted fields as written', () => {
    assert.deepEqual(at('properties', 'payload', 'properties', 'schemaVersion'), {
      type: 'number',
      const: 1,
    });
    assert.deepEqual(at('properties', 'payload', 'properties', 'scope', 'required'), [
      'scorableType',
      'uri',
      'match',
    ]);
    assert.deepEqual(at('properties', 'scorable', 'required'), ['scorableType', 'uri', 'match']);
  });

  it('names the recursive component identifier and refers to it from its children', () => {
    assert.deepEqual(at('properties', 'sourceIdentifier'), { $ref: '#/$defs/ComponentIdentifier' });
    assert.equal(at('$defs', 'ComponentIdentifier', 'additionalProperties'), false);
    assert.deepEqual(at('$defs', 'ComponentIdentifier', 'properties', 'children', 'additionalProperties'), {
      $ref: '#/$defs/ComponentIdentifier',
    });
  });

  it('lists the closed gap vocabulary', () => {
    assert.deepEqual(
      at('properties', 'payload', 'properties', 'coverage', 'properties', 'reasons', 'items', 'enum'),
      [
        'surface_root_unavailable',
        'listing_failed',
        'listing_limit_exceeded',
        'file_limit_exceeded',
        'link_not_followed',
        'dangling_link',
        'read_failed',
        'confinement_unverified',
        'link_outside_root',
        'not_a_file',
        'read_limit_exceeded',
        'unrepresentable_name',
        'matcher_timeout',
        'workspace_unsettled',
        'body_truncated',
        'tls_not_intercepted',
        'tls_intercept_failed',
        'record_limit_exceeded',
        'network_unobserved', // SPEC §11: a workspace judged twice under `sandbox: none` differed
      ],
    );
  });
});

describe('score.schema.json', () => {
  const at = schemaAt('score.schema.json');

  it('is a closed object schema whose value is a boolean or null', () => {
    assert.equal(at('additionalProperties'), false);
    assert.deepEqual(at('properties', 'value'), { type: ['boolean', 'null'] });
    assert.deepEqual(at('properties', 'status'), { type: 'string', enum: ['complete', 'undetermined'] });
  });

  it('requires the matcher defaults inside the scored expectation, as Witness writes them', () => {
    const condition = ['properties', 'scoredExpectation', 'properties', 'conditions', 'items', 'oneOf', '0'];
    assert.deepEqual(at(...condition, 'required'), ['conditionType', 'uri', 'match']);
    for (const index of ['0', '1', '2']) {
      assert.deepEqual(at(...condition, 'properties', 'matcher', 'oneOf', index, 'required'), [
        'matcherType',
        'value',
        'caseSensitive',
        'ignoreWhitespace',
      ]);
    }
  });

  it('leaves messagePieceId optional and requires everything else', () => {
    assert.deepEqual(at('required'), [
      'id',
      'status',
      'value',
      'scoreType',
      'description',
      'rationale',
      'scorable',
      'scorer',
      'scoredExpectation',
      'observationIds',
      'createdAt',
      'metadata',
    ]);
  });
});
