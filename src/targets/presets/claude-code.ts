import { type AgentPreset, commonEnv } from './agent-preset.js';
import { parseClaudeStyleEvents } from './claude-style-events.js';

/**
 * Claude Code (`@anthropic-ai/claude-code`, program `claude`) against an Anthropic Messages endpoint.
 *
 * - `-p` with no prompt argument reads the prompt from stdin.
 * - `--output-format stream-json --verbose`: one JSON event a line (tool calls, results, final `result`).
 * - `--dangerously-skip-permissions` so no approval prompt blocks a headless run; Claude Code refuses it
 *   as root unless `IS_SANDBOX=1`, which the preset sets (the attempt runs in Witness's own sandbox).
 * - `ANTHROPIC_BASE_URL` (without `/v1`) and `ANTHROPIC_API_KEY`; telemetry, error reporting, the
 *   auto-updater and other non-essential traffic off.
 * - Claude Code rejects model names it does not know: name a Claude model (`claude-sonnet-4-5`); the
 *   scripted model answers to any name.
 */
export const claudeCodePreset: AgentPreset = {
  name: 'claude-code',
  api: 'anthropic-messages',
  defaultCommand: 'claude',
  npmPackage: '@anthropic-ai/claude-code',
  agentState: [
    '/.claude/projects',
    '/.claude/statsig',
    '/.claude/todos',
    '/.claude/shell-snapshots',
    '/.claude.json',
    '/.claude.json.backup',
  ],
  buildInvocation({ model, home, command, extraArgs }) {
    return {
      command: command ?? 'claude',
      args: [
        '-p',
        '--output-format',
        'stream-json',
        '--verbose',
        '--model',
        model.name,
        '--max-turns',
        '10',
        '--dangerously-skip-permissions',
        ...(extraArgs ?? []),
      ],
      stdin: '{prompt}',
      env: {
        ...commonEnv(home),
        ANTHROPIC_BASE_URL: model.baseUrl.replace(/\/v1\/?$/, ''),
        ANTHROPIC_API_KEY: model.apiKey,
        DISABLE_TELEMETRY: '1',
        DISABLE_ERROR_REPORTING: '1',
        DISABLE_AUTOUPDATER: '1',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        IS_SANDBOX: '1',
      },
      homeFiles: [],
    };
  },
  parseOutput: parseClaudeStyleEvents,
};
