import type { JsonValue } from '../../models/record.js';
import type { TranscriptEvent } from '../transcript.js';
import { isRecord, jsonLines, type ParsedAgentOutput, textOf } from './agent-preset.js';

/**
 * Claude Code's `--output-format stream-json` events, which Qwen Code also emits (`-o stream-json`, or
 * one JSON array with `-o json`): `assistant` messages with `text`/`tool_use` blocks, `user` messages
 * with `tool_result` blocks, and a final `result` whose `result` field is the answer. A stopped agent
 * leaves no `result`; the last assistant text is then the reply, and the tool calls made so far remain.
 */
export function parseClaudeStyleEvents(stdout: string): ParsedAgentOutput | undefined {
  const trimmed = stdout.trim();
  let objects: Array<Record<string, unknown>>;
  if (trimmed.startsWith('[')) {
    try {
      const value: unknown = JSON.parse(trimmed);
      objects = Array.isArray(value) ? value.filter(isRecord) : [];
    } catch {
      objects = jsonLines(stdout);
    }
  } else {
    objects = jsonLines(stdout);
  }
  const events: TranscriptEvent[] = [];
  const names = new Map<string, string>();
  let lastText: string | undefined;
  let result: string | undefined;
  let recognized = false;
  for (const object of objects) {
    const message = isRecord(object.message) ? object.message : undefined;
    if (object.type === 'result') {
      recognized = true;
      if (typeof object.result === 'string') result = object.result;
      else if (typeof object.error === 'string') result = object.error;
      continue;
    }
    if (message === undefined || !Array.isArray(message.content)) continue;
    if (object.type === 'assistant') {
      recognized = true;
      const texts: string[] = [];
      for (const block of message.content) {
        if (!isRecord(block)) continue;
        if (block.type === 'text' && typeof block.text === 'string') texts.push(block.text);
        if (block.type === 'tool_use') {
          const callId = String(block.id ?? '');
          const name = String(block.name ?? '');
          names.set(callId, name);
          events.push({
            kind: 'tool_call',
            callId,
            name,
            arguments: (isRecord(block.input) ? block.input : {}) as JsonValue,
          });
        }
      }
      if (texts.length > 0) lastText = texts.join('\n');
    } else if (object.type === 'user') {
      for (const block of message.content) {
        if (!isRecord(block) || block.type !== 'tool_result') continue;
        const callId = String(block.tool_use_id ?? '');
        events.push({
          kind: 'tool_result',
          callId,
          name: names.get(callId) ?? '',
          ok: block.is_error !== true,
          text: textOf(block.content),
        });
      }
    }
  }
  if (!recognized) return undefined;
  return { reply: result ?? lastText ?? '', events };
}
