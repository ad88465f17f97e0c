import type { JsonValue } from '../../models/record.js';
import type { TranscriptEvent } from '../transcript.js';
import { type AgentPreset, commonEnv, isRecord, jsonLines } from './agent-preset.js';

/**
 * Codex (`@openai/codex`, program `codex`) against an OpenAI Responses endpoint (Codex no longer speaks
 * Chat Completions: `wire_api = "chat"` is refused).
 *
 * - `codex exec --json … -`: non-interactive, one JSON event a line, the prompt read from stdin (`-`).
 * - `--skip-git-repo-check` (a workspace need not be a repository) and
 *   `--dangerously-bypass-approvals-and-sandbox`: no approval prompts, and Codex's own sandbox off —
 *   Witness runs the attempt in its own, and the attack is whether the agent *would* act.
 * - The endpoint is a provider `witness` in `$CODEX_HOME/config.toml` (the attempt's home), its key read
 *   from `WITNESS_AGENT_API_KEY`; update checks and analytics off there.
 */
export const codexPreset: AgentPreset = {
  name: 'codex',
  api: 'openai-responses',
  defaultCommand: 'codex',
  npmPackage: '@openai/codex',
  agentState: [
    '/.codex/sessions',
    '/.codex/log',
    '/.codex/*.json',
    '/.codex/*.jsonl',
    '/.codex/tmp',
    '/.codex/cache',
  ],
  buildInvocation({ model, home, command, extraArgs }) {
    const config = [
      `model = ${tomlString(model.name)}`,
      'model_provider = "witness"',
      'check_for_update_on_startup = false',
      '',
      '[analytics]',
      'enabled = false',
      '',
      '[model_providers.witness]',
      'name = "witness"',
      `base_url = ${tomlString(model.baseUrl)}`,
      'env_key = "WITNESS_AGENT_API_KEY"',
      'wire_api = "responses"',
      '',
    ].join('\n');
    return {
      command: command ?? 'codex',
      args: [
        'exec',
        '--json',
        '--skip-git-repo-check',
        '--dangerously-bypass-approvals-and-sandbox',
        '--model',
        model.name,
        ...(extraArgs ?? []),
        '-',
      ],
      stdin: '{prompt}',
      env: { ...commonEnv(home), CODEX_HOME: `${home}/.codex`, WITNESS_AGENT_API_KEY: model.apiKey },
      homeFiles: [{ path: '.codex/config.toml', content: config }],
    };
  },
  parseOutput(stdout) {
    const events: TranscriptEvent[] = [];
    let recognized = false;
    let reply: string | undefined;
    let error: string | undefined;
    for (const object of jsonLines(stdout)) {
      if (typeof object.type !== 'string') continue;
      if (object.type === 'thread.started' || object.type.startsWith('turn.')) recognized = true;
      if (object.type === 'turn.failed' && isRecord(object.error))
        error = String(object.error.message ?? 'error');
      if (object.type === 'error' && typeof object.message === 'string') error = object.message;
      if (object.type !== 'item.completed' || !isRecord(object.item)) continue;
      recognized = true;
      const item = object.item;
      const callId = String(item.id ?? '');
      switch (item.type) {
        case 'agent_message':
          if (typeof item.text === 'string') reply = item.text;
          break;
        case 'command_execution':
          events.push(
            { kind: 'tool_call', callId, name: 'shell', arguments: { command: String(item.command ?? '') } },
            {
              kind: 'tool_result',
              callId,
              name: 'shell',
              ok: item.exit_code === 0,
              text: String(item.aggregated_output ?? ''),
            },
          );
          break;
        case 'file_change':
          events.push(
            {
              kind: 'tool_call',
              callId,
              name: 'file_change',
              arguments: (Array.isArray(item.changes) ? item.changes : []) as JsonValue,
            },
            {
              kind: 'tool_result',
              callId,
              name: 'file_change',
              ok: item.status === 'completed',
              text: String(item.status ?? ''),
            },
          );
          break;
        case 'mcp_tool_call':
          events.push({
            kind: 'tool_call',
            callId,
            name: `${String(item.server ?? '')}/${String(item.tool ?? '')}`,
            arguments: (isRecord(item.arguments) ? item.arguments : {}) as JsonValue,
          });
          break;
        default:
          break;
      }
    }
    if (!recognized) return undefined;
    return { reply: reply ?? (error === undefined ? '' : `codex reported an error: ${error}`), events };
  },
};

/** A TOML basic string: JSON string escapes are valid TOML escapes for these characters. */
function tomlString(value: string): string {
  return JSON.stringify(value);
}
