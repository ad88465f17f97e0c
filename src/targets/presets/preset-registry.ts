import type { AgentPreset, AgentPresetName } from './agent-preset.js';
import { claudeCodePreset } from './claude-code.js';
import { codexPreset } from './codex.js';
import { geminiCliPreset } from './gemini-cli.js';
import { opencodePreset } from './opencode.js';
import { qwenCodePreset } from './qwen-code.js';

/** Every preset by name; `satisfies` makes adding a name to AGENT_PRESETS without a module a type error. */
export const AGENT_PRESET_MODULES = {
  'qwen-code': qwenCodePreset,
  codex: codexPreset,
  'claude-code': claudeCodePreset,
  'gemini-cli': geminiCliPreset,
  opencode: opencodePreset,
} as const satisfies Record<AgentPresetName, AgentPreset>;
