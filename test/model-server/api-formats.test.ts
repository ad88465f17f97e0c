import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { API_FORMATS, routeRequest } from '../../src/model-server/api-formats.js';
import { AGENT_APIS } from '../../src/targets/presets/agent-preset.js';
import { runCli } from '../support/cli.js';

describe('model server API formats', () => {
  it('registers one format per API an agent preset can speak', () => {
    assert.deepEqual(API_FORMATS.map((format) => format.id).sort(), [...AGENT_APIS].sort());
  });

  it('routes each documented path to its own format, with or without a prefix before /v1', () => {
    for (const format of API_FORMATS) {
      for (const documented of format.paths) {
        const path = documented.replace('<model>', 'some-model');
        for (const prefixed of [path, `/proxy${path}`]) {
          const route = routeRequest(prefixed);
          assert.equal(route?.format.id, format.id, `${prefixed} belongs to ${format.name}`);
          const others = API_FORMATS.filter((other) => other !== format && other.endpointFor(prefixed));
          assert.deepEqual(
            others.map((other) => other.id),
            [],
            `${prefixed} is claimed by one format only`,
          );
        }
      }
    }
    assert.equal(routeRequest('/v1/nothing'), undefined);
    assert.equal(routeRequest('/v1/models/witness-scripted')?.endpoint.kind, 'models');
    assert.equal(routeRequest('/v1beta/models/gemini-2.5-pro:countTokens')?.endpoint.kind, 'count_tokens');
  });

  it('names every API it speaks in `witness model serve --help`', async () => {
    const help = await runCli(['model', 'serve', '--help']);
    assert.equal(help.status, 0);
    const text = help.stdout.replace(/\s+/g, ' ');
    for (const format of API_FORMATS) assert.ok(text.includes(format.name), `help names ${format.name}`);
    assert.equal(API_FORMATS.length, 4);
  });
});
