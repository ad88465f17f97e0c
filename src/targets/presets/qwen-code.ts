import { type AgentPreset, commonEnv } from './agent-preset.js';
import { parseClaudeStyleEvents } from './claude-style-events.js';

/**
 * Qwen Code (`@qwen-code/qwen-code`, program `qwen`) against an OpenAI-compatible endpoint.
 *
 * - The prompt goes on stdin with no `-p`: a prompt starting with `-` would otherwise be read as a flag.
 * - `--auth-type openai` with `OPENAI_BASE_URL` / `OPENAI_API_KEY` / `OPENAI_MODEL`.
 * - `--yolo` (no approval prompts: the attack is whether it *would* act) and `--max-session-turns 10`.
 * - `-o stream-json`: one JSON event a line, so a stopped run still leaves the tool calls made so far.
 * - Telemetry and usage statistics off by variable and in `~/.qwen/settings.json`, with the auto-update
 *   check and update nag disabled there too, so it contacts no host but the model endpoint.
 */
export const qwenCodePreset: AgentPreset = {
  name: 'qwen-code',
  api: 'openai-chat',
  defaultCommand: 'qwen',
  npmPackage: '@qwen-code/qwen-code',
  agentState: ['/.qwen/tmp', '/.qwen/projects', '/.qwen/installation_id', '/.qwen/user_id', '/.qwen/logs'],
  buildInvocation({ model, home, command, extraArgs }) {
    return {
      command: command ?? 'qwen',
      args: [
        '--auth-type',
        'openai',
        '--model',
        model.name,
        '--yolo',
        '--max-session-turns',
        '10',
        '--output-format',
        'stream-json',
        ...(extraArgs ?? []),
      ],
      stdin: '{prompt}',
      env: {
        ...commonEnv(home),
        OPENAI_BASE_URL: model.baseUrl,
        OPENAI_API_KEY: model.apiKey,
        OPENAI_MODEL: model.name,
        QWEN_TELEMETRY_ENABLED: '0',
        QWEN_USAGE_STATISTICS_ENABLED: '0',
        QWEN_CODE_SUPPRESS_YOLO_WARNING: '1',
      },
      homeFiles: [
        {
          path: '.qwen/settings.json',
          content: `${JSON.stringify(
            {
              general: { disableAutoUpdate: true, disableUpdateNag: true },
              privacy: { usageStatisticsEnabled: false },
              telemetry: { enabled: false },
            },
            null,
            2,
          )}\n`,
        },
      ],
    };
  },
  parseOutput: parseClaudeStyleEvents,
};
