import type { Conversation, ConversationItem, ModelTurn, OfferedTool } from './conversation.js';

/**
 * The OpenAI Chat Completions wire format (`POST /v1/chat/completions`), both as one JSON object and as
 * a server-sent event stream (`stream: true`, ending in `data: [DONE]`). Only what a coding agent needs:
 * text and function tool calls; images and audio are ignored.
 */

export interface ParsedChatRequest {
  model: string;
  stream: boolean;
  includeUsage: boolean;
  conversation: Conversation;
}

export class WireFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WireFormatError';
  }
}

export function parseChatRequest(body: unknown): ParsedChatRequest {
  const request = asObject(body, 'the request body');
  if (!Array.isArray(request.messages)) throw new WireFormatError('messages must be an array');
  const system: string[] = [];
  const items: ConversationItem[] = [];
  for (const raw of request.messages) {
    const message = asObject(raw, 'a message');
    const text = contentText(message.content);
    switch (message.role) {
      case 'system':
      case 'developer':
        system.push(text);
        break;
      case 'user':
        // Each text part is its own item: clients put their context and the request in separate parts.
        for (const part of contentParts(message.content)) items.push({ kind: 'user', text: part });
        break;
      case 'assistant': {
        const calls = Array.isArray(message.tool_calls)
          ? message.tool_calls.map((call) => {
              const value = asObject(call, 'a tool call');
              const fn = asObject(value.function, 'a tool call function');
              return {
                id: String(value.id ?? ''),
                name: String(fn.name ?? ''),
                arguments: parseArguments(fn.arguments),
              };
            })
          : [];
        items.push({ kind: 'assistant', text, calls });
        break;
      }
      case 'tool':
        items.push({ kind: 'tool_result', callId: String(message.tool_call_id ?? ''), text });
        break;
      default:
        throw new WireFormatError(`unknown message role ${JSON.stringify(message.role)}`);
    }
  }
  const tools: OfferedTool[] = Array.isArray(request.tools)
    ? request.tools.flatMap((raw) => {
        const tool = asObject(raw, 'a tool');
        if (tool.type !== undefined && tool.type !== 'function') return [];
        const fn = asObject(tool.function, 'a tool function');
        return [
          {
            name: String(fn.name ?? ''),
            description: typeof fn.description === 'string' ? fn.description : '',
            parameters: isObject(fn.parameters) ? fn.parameters : {},
          },
        ];
      })
    : [];
  const options = isObject(request.stream_options) ? request.stream_options : {};
  return {
    model: typeof request.model === 'string' ? request.model : 'witness-scripted',
    stream: request.stream === true,
    includeUsage: options.include_usage === true,
    conversation: { system: system.join('\n'), items, tools },
  };
}

export interface ResponseMeta {
  id: string;
  model: string;
  createdSeconds: number;
  promptTokens: number;
}

export function renderChatCompletion(turn: ModelTurn, meta: ResponseMeta): Record<string, unknown> {
  const completionTokens = turnTokens(turn);
  const message =
    turn.kind === 'text'
      ? { role: 'assistant', content: turn.text, refusal: null }
      : {
          role: 'assistant',
          content: null,
          refusal: null,
          tool_calls: [
            {
              id: turn.call.id,
              type: 'function',
              function: { name: turn.call.name, arguments: JSON.stringify(turn.call.arguments) },
            },
          ],
        };
  return {
    id: meta.id,
    object: 'chat.completion',
    created: meta.createdSeconds,
    model: meta.model,
    choices: [
      { index: 0, message, logprobs: null, finish_reason: turn.kind === 'text' ? 'stop' : 'tool_calls' },
    ],
    usage: usage(meta.promptTokens, completionTokens),
  };
}

/** The SSE `data:` payloads of a streamed completion, in order, `[DONE]` last. */
export function renderChatCompletionChunks(
  turn: ModelTurn,
  meta: ResponseMeta,
  includeUsage: boolean,
): string[] {
  const chunk = (delta: Record<string, unknown>, finish: string | null) =>
    JSON.stringify({
      id: meta.id,
      object: 'chat.completion.chunk',
      created: meta.createdSeconds,
      model: meta.model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    });
  const frames = [chunk({ role: 'assistant', content: '' }, null)];
  if (turn.kind === 'text') {
    for (const piece of pieces(turn.text)) frames.push(chunk({ content: piece }, null));
    frames.push(chunk({}, 'stop'));
  } else {
    const args = JSON.stringify(turn.call.arguments);
    frames.push(
      chunk(
        {
          tool_calls: [
            {
              index: 0,
              id: turn.call.id,
              type: 'function',
              function: { name: turn.call.name, arguments: '' },
            },
          ],
        },
        null,
      ),
    );
    for (const piece of pieces(args))
      frames.push(chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }, null));
    frames.push(chunk({}, 'tool_calls'));
  }
  if (includeUsage) {
    frames.push(
      JSON.stringify({
        id: meta.id,
        object: 'chat.completion.chunk',
        created: meta.createdSeconds,
        model: meta.model,
        choices: [],
        usage: usage(meta.promptTokens, turnTokens(turn)),
      }),
    );
  }
  frames.push('[DONE]');
  return frames;
}

export function renderModelList(models: readonly string[]): Record<string, unknown> {
  return {
    object: 'list',
    data: models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'witness' })),
  };
}

export function renderOpenAiError(message: string, type: string): Record<string, unknown> {
  return { error: { message, type, param: null, code: null } };
}

/** A rough token count (four characters a token): enough for clients that budget their context. */
export function estimateTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

export function turnTokens(turn: ModelTurn): number {
  return estimateTokens(turn.kind === 'text' ? turn.text : JSON.stringify(turn.call.arguments));
}

/** Splits streamed text into pieces of at most 24 characters, so clients must reassemble deltas. */
export function pieces(text: string): string[] {
  const out: string[] = [];
  for (let index = 0; index < text.length; index += 24) out.push(text.slice(index, index + 24));
  return out.length === 0 ? [''] : out;
}

function usage(prompt: number, completion: number) {
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

function contentText(content: unknown): string {
  return contentParts(content).join('\n');
}

function contentParts(content: unknown): string[] {
  if (typeof content === 'string') return [content];
  if (!Array.isArray(content)) return [];
  return content.flatMap((part) => (isObject(part) && typeof part.text === 'string' ? [part.text] : []));
}

function parseArguments(raw: unknown): Record<string, unknown> {
  if (isObject(raw)) return raw;
  if (typeof raw !== 'string' || raw === '') return {};
  try {
    const value: unknown = JSON.parse(raw);
    return isObject(value) ? value : {};
  } catch {
    return {};
  }
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function asObject(value: unknown, what: string): Record<string, unknown> {
  if (!isObject(value)) throw new WireFormatError(`${what} must be a JSON object`);
  return value;
}
