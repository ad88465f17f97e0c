import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  type ComponentIdentifier,
  ComponentIdentifierSchema,
  identifierHash,
} from '../../src/models/identifier.js';
import { issuePaths } from '../support/issues.js';

const source: ComponentIdentifier = {
  type: 'local_file_surface_source',
  version: '1',
  params: { root: '/ws', maxFiles: 1000 },
};

const scorer: ComponentIdentifier = {
  type: 'file_write_scorer',
  version: '1',
  params: { matchingVersion: 1 },
  children: { source },
};

describe('identifierHash', () => {
  it('is the sha256 of the identifier as canonical JSON (keys sorted at every level)', () => {
    const canonical =
      '{"children":{"source":{"params":{"maxFiles":1000,"root":"/ws"},"type":"local_file_surface_source","version":"1"}},' +
      '"params":{"matchingVersion":1},"type":"file_write_scorer","version":"1"}';
    assert.equal(identifierHash(scorer), createHash('sha256').update(canonical).digest('hex'));
  });

  it('does not depend on the order keys were written in', () => {
    const reordered: ComponentIdentifier = {
      version: '1',
      params: { maxFiles: 1000, root: '/ws' },
      type: 'local_file_surface_source',
    };
    assert.equal(identifierHash(reordered), identifierHash(source));
  });

  it('differs when a param differs', () => {
    assert.notEqual(
      identifierHash({ ...source, params: { root: '/ws2', maxFiles: 1000 } }),
      identifierHash(source),
    );
    assert.notEqual(
      identifierHash({ ...source, params: { root: '/ws', maxFiles: 999 } }),
      identifierHash(source),
    );
  });

  it('differs when the type, the version or a child differs', () => {
    const base = identifierHash(scorer);
    assert.notEqual(identifierHash({ ...scorer, type: 'other' }), base);
    assert.notEqual(identifierHash({ ...scorer, version: '2' }), base);
    assert.notEqual(
      identifierHash({
        ...scorer,
        children: { source: { ...source, params: { root: '/other', maxFiles: 1000 } } },
      }),
      base,
    );
  });

  it('differs between a param that is a string and one that is a number', () => {
    assert.notEqual(
      identifierHash({ ...source, params: { maxFiles: '1000', root: '/ws' } }),
      identifierHash({ ...source, params: { maxFiles: 1000, root: '/ws' } }),
    );
  });

  it('is the same for an absent and an undefined children', () => {
    assert.equal(identifierHash({ ...source, children: undefined }), identifierHash(source));
  });
});

describe('ComponentIdentifierSchema', () => {
  it('reads nested children and round-trips them byte for byte', () => {
    const json = JSON.stringify(scorer);
    assert.equal(JSON.stringify(ComponentIdentifierSchema.parse(JSON.parse(json))), json);
  });

  it('rejects an unknown key, also inside a child', () => {
    assert.deepEqual(issuePaths(ComponentIdentifierSchema, { ...source, secret: 'x' }), ['secret']);
    assert.deepEqual(
      issuePaths(ComponentIdentifierSchema, { ...scorer, children: { source: { ...source, apiKey: 'k' } } }),
      ['children.source.apiKey'],
    );
  });

  it('rejects an empty type or version, and params that are not JSON', () => {
    assert.deepEqual(issuePaths(ComponentIdentifierSchema, { ...source, type: '' }), ['type']);
    assert.deepEqual(issuePaths(ComponentIdentifierSchema, { ...source, version: '' }), ['version']);
    assert.deepEqual(issuePaths(ComponentIdentifierSchema, { ...source, params: { n: Number.NaN } }), [
      'params.n',
    ]);
  });
});
