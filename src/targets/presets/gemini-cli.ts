import type { JsonValue } from '../../models/record.js';
import type { TranscriptEvent } from '../transcript.js';
import { type AgentPreset, commonEnv, isRecord, jsonLines } from './agent-preset.js';

/**
 * Gemini CLI (`@google/gemini-cli`, program `gemini`) against a Gemini API endpoint.
 *
 * - The prompt goes on stdin (read when stdin is not a terminal); `--yolo` approves every tool, and
 *   `GEMINI_CLI_TRUST_WORKSPACE=true` trusts the workspace (headless runs in an untrusted folder exit 55);
 *   `--output-format stream-json`: one JSON event a line (`tool_use`, `tool_result`, `message`, `result`).
 * - `GOOGLE_GEMINI_BASE_URL` (the endpoint, without `/v1beta`) and `GEMINI_API_KEY`; API-key auth chosen
 *   in `~/.gemini/settings.json`, where telemetry, usage statistics, auto-update and the update nag are off.
 */
export const geminiCliPreset: AgentPreset = {
  name: 'gemini-cli',
  api: 'gemini',
  defaultCommand: 'gemini',
  npmPackage: '@google/gemini-cli',
  agentState: ['/.gemini/tmp', '/.gemini/installation_id', '/.gemini/user_id', '/.gemini/projects.json'],
  buildInvocation({ model, home, command, extraArgs }) {
    const settings = {
      security: { auth: { selectedType: 'gemini-api-key' } },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
      general: { disableAutoUpdate: true, disableUpdateNag: true },
    };
    return {
      command: command ?? 'gemini',
      args: ['--model', model.name, '--yolo', '--output-format', 'stream-json', ...(extraArgs ?? [])],
      stdin: '{prompt}',
      env: {
        ...commonEnv(home),
        GOOGLE_GEMINI_BASE_URL: model.baseUrl.replace(/\/v1(beta)?\/?$/, ''),
        GEMINI_API_KEY: model.apiKey,
        GEMINI_CLI_NO_RELAUNCH: 'true',
        GEMINI_CLI_TRUST_WORKSPACE: 'true',
      },
      homeFiles: [{ path: '.gemini/settings.json', content: `${JSON.stringify(settings, null, 2)}\n` }],
    };
  },
  parseOutput(stdout) {
    const events: TranscriptEvent[] = [];
    const names = new Map<string, string>();
    let recognized = false;
    let reply = '';
    let turnText = '';
    let error: string | undefined;
    for (const object of jsonLines(stdout)) {
      switch (object.type) {
        case 'init':
          recognized = true;
          break;
        case 'message':
          recognized = true;
          if (object.role === 'assistant' && typeof object.content === 'string') {
            turnText = object.delta === true ? turnText + object.content : object.content;
            reply = turnText;
          }
          break;
        case 'tool_use': {
          recognized = true;
          turnText = '';
          const callId = String(object.tool_id ?? '');
          const name = String(object.tool_name ?? '');
          names.set(callId, name);
          events.push({
            kind: 'tool_call',
            callId,
            name,
            arguments: (isRecord(object.parameters) ? object.parameters : {}) as JsonValue,
          });
          break;
        }
        case 'tool_result': {
          recognized = true;
          const callId = String(object.tool_id ?? '');
          const failure = isRecord(object.error) ? String(object.error.message ?? '') : undefined;
          events.push({
            kind: 'tool_result',
            callId,
            name: names.get(callId) ?? '',
            ok: object.status === 'success',
            text: typeof object.output === 'string' ? object.output : (failure ?? ''),
          });
          break;
        }
        case 'error':
          recognized = true;
          error = String(object.message ?? 'error');
          break;
        case 'result':
          recognized = true;
          if (object.status === 'error' && isRecord(object.error))
            error = String(object.error.message ?? 'error');
          break;
        default:
          break;
      }
    }
    if (!recognized) return undefined;
    return {
      reply: reply !== '' || error === undefined ? reply : `gemini reported an error: ${error}`,
      events,
    };
  },
};
