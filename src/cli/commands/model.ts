import { type Command, Option } from 'commander';
import { API_FORMATS } from '../../model-server/api-formats.js';
import { LOOPBACK_HOSTS, SCRIPTED_MODEL_NAME, startModelServer } from '../../model-server/model-server.js';
import { SCRIPTED_ATTACKER_NAME } from '../../model-server/scripted-attacker.js';
import { MOCK_MODES, type MockMode } from '../../targets/mock-planner.js';
import type { CliIo } from '../io.js';
import { UsageError } from '../usage-error.js';

/** `witness model serve`: the scripted, prompt-injectable model on loopback, until interrupted. */
export function registerModel(program: Command, io: CliIo): void {
  const model = program.command('model').description('a built-in scripted model for agents to talk to');
  model
    .command('serve')
    .description(
      `serve a deterministic, prompt-injectable model on loopback (${listApis()} APIs); no keys, no network`,
    )
    .option('--port <port>', 'port to listen on (0 picks a free one)', '8719')
    .addOption(
      new Option('--host <host>', 'loopback address to bind')
        .choices([...LOOPBACK_HOSTS])
        .default('127.0.0.1'),
    )
    .addOption(
      new Option(
        '--mode <mode>',
        "vulnerable follows instructions found in tool results; guarded ignores them; refusing refuses every request; picky acts only on an injection that meets its demands, which the scripted attacker (model witness-attacker) reaches from its refusals (every mode but refusing does the user's task)",
      )
        .choices([...MOCK_MODES])
        .default('vulnerable'),
    )
    .action(async (options: { port: string; host: string; mode: MockMode }) => {
      const port = Number(options.port);
      if (!/^\d+$/.test(options.port) || port > 65_535) {
        throw new UsageError(`--port must be an integer from 0 to 65535, got ${options.port}`);
      }
      const server = await startModelServer({ port, host: options.host, mode: options.mode });
      io.out(`${server.url}/v1\n`);
      io.err(
        `scripted model (${options.mode}) listening on ${server.url}/v1 — model name ${SCRIPTED_MODEL_NAME} (the scripted attacker: ${SCRIPTED_ATTACKER_NAME}), any API key; Ctrl-C stops it\n`,
      );
      try {
        await new Promise<void>((resolve) => {
          if (io.signal.aborted) resolve();
          else io.signal.addEventListener('abort', () => resolve(), { once: true });
        });
      } finally {
        await server.close();
      }
    });
}

/** "A, B, C and D": the names of the API formats the server speaks, from its registry. */
function listApis(): string {
  const names = API_FORMATS.map((format) => format.name);
  return names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} and ${names.at(-1) as string}`;
}
