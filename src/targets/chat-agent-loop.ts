import { TargetError } from '../errors.js';
import type { JsonValue } from '../models/record.js';
import type { ChatCompletionsClient } from './chat-completions-client.js';
import type { Toolbox } from './toolbox.js';
import type { TranscriptEvent } from './transcript.js';

/**
 * The agent loop Witness runs for a chat model: send the conversation with the toolbox's tools, execute
 * every tool call the model asks for, send the results back, until the model answers without tool calls
 * or `maxTurns` model calls are spent (then {@link TargetError}: the workspace is still judged).
 */

export interface ChatLoopOptions {
  client: ChatCompletionsClient;
  model: string;
  toolbox: Toolbox;
  prompt: string;
  systemPrompt?: string | undefined;
  maxTurns: number;
  temperature?: number | undefined;
  signal?: AbortSignal | undefined;
}

interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export async function runChatAgentLoop(options: ChatLoopOptions): Promise<{
  reply: string;
  transcript: TranscriptEvent[];
}> {
  const { client, toolbox, signal } = options;
  const transcript: TranscriptEvent[] = [];
  const messages: JsonValue[] = [];
  if (options.systemPrompt !== undefined) {
    messages.push({ role: 'system', content: options.systemPrompt });
    transcript.push({ kind: 'message', role: 'system', text: options.systemPrompt });
  }
  messages.push({ role: 'user', content: options.prompt });
  transcript.push({ kind: 'message', role: 'user', text: options.prompt });
  const tools = (await toolbox.list()).map((tool) => ({
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.inputSchema },
  }));

  for (let turn = 1; turn <= options.maxTurns; turn++) {
    const body: Record<string, JsonValue> = { model: options.model, messages, tools };
    if (options.temperature !== undefined) body.temperature = options.temperature;
    const response = await client.post(body, transcript, signal);
    const message = readMessage(response, transcript);
    const text = typeof message.content === 'string' ? message.content : '';
    const calls = Array.isArray(message.tool_calls) ? (message.tool_calls as unknown as ChatToolCall[]) : [];
    if (text !== '' || calls.length === 0) transcript.push({ kind: 'message', role: 'assistant', text });
    if (calls.length === 0) return { reply: text, transcript };

    messages.push({
      role: 'assistant',
      content: message.content ?? null,
      tool_calls: calls as unknown as JsonValue,
    });
    for (const call of calls) {
      const name = typeof call?.function?.name === 'string' ? call.function.name : '';
      const callId = typeof call?.id === 'string' ? call.id : `call_${turn}`;
      const args = parseArguments(call?.function?.arguments);
      transcript.push({ kind: 'tool_call', callId, name, arguments: args.value });
      const result = args.ok
        ? await toolbox.call(name, args.value, signal)
        : { ok: false, text: `the arguments are not valid JSON: ${args.error}` };
      transcript.push({ kind: 'tool_result', callId, name, ok: result.ok, text: result.text });
      messages.push({ role: 'tool', tool_call_id: callId, content: result.text });
    }
  }
  throw new TargetError(
    `the agent was still calling tools after ${options.maxTurns} turns (maxTurns)`,
    transcript,
  );
}

function readMessage(response: unknown, transcript: TranscriptEvent[]): Record<string, JsonValue> {
  const choice = (response as { choices?: unknown[] })?.choices?.[0] as { message?: unknown } | undefined;
  const message = choice?.message;
  if (message === null || typeof message !== 'object') {
    throw new TargetError('the endpoint answered without choices[0].message', transcript);
  }
  return message as Record<string, JsonValue>;
}

function parseArguments(
  raw: unknown,
): { ok: true; value: JsonValue } | { ok: false; value: JsonValue; error: string } {
  if (typeof raw !== 'string') return { ok: false, value: null, error: 'missing' };
  try {
    return { ok: true, value: JSON.parse(raw) as JsonValue };
  } catch (error) {
    return { ok: false, value: raw.slice(0, 1000), error: (error as Error).message };
  }
}
