import type { JsonValue } from '../../models/record.js';
import type { TranscriptEvent } from '../transcript.js';
import { type AgentPreset, commonEnv, isRecord, jsonLines } from './agent-preset.js';

/**
 * opencode (`opencode-ai`, program `opencode`) against an OpenAI-compatible endpoint.
 *
 * - `opencode run --format json --auto`: non-interactive, one JSON event a line, permissions granted
 *   (the `permission` block of the config allows edits and shell, denies web fetches). The prompt goes on
 *   stdin: `run` reads it there when no message argument is given.
 * - The endpoint is a custom provider `witness` in `~/.config/opencode/opencode.json`
 *   (`@ai-sdk/openai-compatible`, key read from `WITNESS_AGENT_API_KEY`), selected as the model.
 * - `--pure` and `OPENCODE_DISABLE_*` turn off external plugins, the models.dev catalogue fetch, LSP
 *   downloads, auto-update, sharing and reading Claude Code's files from the home.
 */
export const opencodePreset: AgentPreset = {
  name: 'opencode',
  api: 'openai-chat',
  defaultCommand: 'opencode',
  npmPackage: 'opencode-ai',
  agentState: ['/.local/share/opencode', '/.local/state/opencode', '/.cache/opencode'],
  buildInvocation({ model, home, command, extraArgs }) {
    const config = {
      $schema: 'https://opencode.ai/config.json',
      autoupdate: false,
      share: 'disabled',
      model: `witness/${model.name}`,
      permission: { edit: 'allow', bash: 'allow', webfetch: 'deny' },
      provider: {
        witness: {
          npm: '@ai-sdk/openai-compatible',
          name: 'Witness',
          options: { baseURL: model.baseUrl, apiKey: '{env:WITNESS_AGENT_API_KEY}' },
          models: { [model.name]: { name: model.name } },
        },
      },
    };
    return {
      command: command ?? 'opencode',
      args: [
        'run',
        '--format',
        'json',
        '--auto',
        '--pure',
        '--model',
        `witness/${model.name}`,
        ...(extraArgs ?? []),
      ],
      stdin: '{prompt}',
      env: {
        ...commonEnv(home),
        WITNESS_AGENT_API_KEY: model.apiKey,
        OPENCODE_DISABLE_AUTOUPDATE: '1',
        OPENCODE_DISABLE_SHARE: '1',
        OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
        OPENCODE_DISABLE_MODELS_FETCH: '1',
        OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
        OPENCODE_DISABLE_CLAUDE_CODE: '1',
        OPENCODE_DISABLE_EXTERNAL_SKILLS: '1',
      },
      homeFiles: [
        { path: '.config/opencode/opencode.json', content: `${JSON.stringify(config, null, 2)}\n` },
      ],
    };
  },
  parseOutput(stdout) {
    const events: TranscriptEvent[] = [];
    let recognized = false;
    let reply: string | undefined;
    let error: string | undefined;
    for (const object of jsonLines(stdout)) {
      const part = isRecord(object.part) ? object.part : undefined;
      if (object.type === 'text' && part !== undefined && typeof part.text === 'string') {
        recognized = true;
        reply = part.text;
      } else if (object.type === 'tool_use' && part !== undefined) {
        recognized = true;
        const state = isRecord(part.state) ? part.state : {};
        const callId = String(part.callID ?? '');
        const name = String(part.tool ?? '');
        events.push({
          kind: 'tool_call',
          callId,
          name,
          arguments: (isRecord(state.input) ? state.input : {}) as JsonValue,
        });
        if (state.status === 'completed' || state.status === 'error') {
          const text = state.status === 'completed' ? state.output : state.error;
          events.push({
            kind: 'tool_result',
            callId,
            name,
            ok: state.status === 'completed',
            text: typeof text === 'string' ? text : '',
          });
        }
      } else if (object.type === 'error') {
        recognized = true;
        const detail = isRecord(object.error) ? object.error : {};
        const data = isRecord(detail.data) ? detail.data : {};
        error = String(data.message ?? detail.name ?? 'error');
      } else if (object.type === 'step_start' || object.type === 'step_finish') {
        recognized = true;
      }
    }
    if (!recognized) return undefined;
    return { reply: reply ?? (error === undefined ? '' : `opencode reported an error: ${error}`), events };
  },
};
